// Every kind the importer knows, in the order their rows are written (referenced kinds first).
import type { ImportKind } from './kind.ts';
import { userKind } from './users.ts';
import { fileKind } from '../files/import.ts';

export function importKinds(): ImportKind<any>[] {
  return [userKind, fileKind];
}
