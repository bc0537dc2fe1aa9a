// Request shapes of the trash (docs/trash.md).
import { Type } from '@sinclair/typebox';

// A delete takes no body, or `{}`; any member is unknown_field, and `null` or any other JSON that
// is not an object is invalid_type. The routes declare the body optional (`optionalBody`), which
// reads an absent one as `{}` (docs/trash.md §Deleting).
export const DeleteBody = Type.Object({}, { additionalProperties: false });
