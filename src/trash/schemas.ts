// Request shapes of the trash (docs/trash.md).
import { Type } from '@sinclair/typebox';

// A delete takes no body, or `{}`; any member is unknown_field. No body arrives as undefined,
// which the union accepts.
export const DeleteBody = Type.Union([Type.Object({}, { additionalProperties: false }), Type.Null()]);
