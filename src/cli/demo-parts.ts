// The registry of demo parts: what `rolodex demo` loads, one part per resource, in the order
// their `after` steps run. A part lives with its resource (`<resource>/demo.ts`) and never imports
// this file.
import { emailsPart } from '../emails/demo.ts';
import { filesDemoPart } from '../files/demo.ts';
import type { DemoPart } from '../import/demo-part.ts';
import { listsPart } from '../lists/demo.ts';
import { meetingsPart } from '../meetings/demo.ts';
import { messagesPart } from '../messages/demo.ts';
import { objectsPart } from '../objects/demo.ts';
import { recordsPart } from '../records/demo.ts';
import { usersPart } from '../users/demo.ts';

export function demoParts(): DemoPart[] {
  return [usersPart, filesDemoPart(), recordsPart, objectsPart, listsPart, messagesPart, meetingsPart, emailsPart];
}
