// Tables owned by lists and records (filled in by the lists issue).
export interface ListsTables {}
