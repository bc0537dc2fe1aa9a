// Tables owned by files and knowledge (filled in by the files issue).
export interface FilesTables {}
