// Every kind the importer knows, in the order their rows are written (referenced kinds first).
import type { ImportKind } from './kind.ts';
import { userKind } from './users.ts';
import { channelKind } from '../channels/import.ts';
import { fileKind } from '../files/import.ts';
import { messageKind } from '../messages/import.ts';
import { accountKind, contactKind, opportunityKind } from '../records/import.ts';

export function importKinds(): ImportKind<any>[] {
  return [userKind, channelKind, fileKind, accountKind, contactKind, opportunityKind, messageKind];
}
