// Tables owned by channels and messages (filled in by the messages issue).
export interface MessagesTables {}
