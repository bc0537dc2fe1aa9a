import { Type, type Static } from '@sinclair/typebox';
import { Envelope } from '../lib/paging-schemas.ts';
import { MAX_FILE_BYTES, PURPOSES } from './rules.ts';

const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const fileProperties = {
  id: Type.String({ description: 'Unique identifier of the file (fil_…).' }),
  completedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  expiresAt: Nullable(Timestamp),
  filename: Type.String(),
  mimeType: Type.String(),
  sizeBytes: Type.Integer({ minimum: 0 }),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Literal('CANCELLED'), Type.Literal('EXPIRED')]),
};

export const FileResource = Type.Object(fileProperties, { $id: 'File', additionalProperties: false });

export const FileUploadSession = Type.Object(
  {
    ...fileProperties,
    uploadUrl: Type.String({ description: 'Send the bytes here with PUT; no API key; valid until expiresAt.' }),
    uploadHeaders: Type.Record(Type.String(), Type.String(), { description: 'Headers to send with the PUT.' }),
  },
  { $id: 'FileUploadSession', additionalProperties: false },
);

export const FileList = Envelope(FileResource, 'FileList');

export const FileDownloadAddress = Type.Object(
  { url: Type.String({ description: 'Temporary download address.' }), expiresAt: Timestamp },
  { $id: 'FileDownloadAddress', additionalProperties: false },
);

export const CreateFileBody = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255, description: 'Original filename; no control characters.' }),
    mimeType: Type.String({ minLength: 3, maxLength: 255, description: 'A valid type/subtype.' }),
    sizeBytes: Type.Integer({ minimum: 1, description: `Expected size in bytes; at most ${MAX_FILE_BYTES} (512 MB), less for some purposes.` }),
    purpose: Type.Optional(Type.Union(PURPOSES.map((p) => Type.Literal(p)))),
  },
  { additionalProperties: false },
);
export type CreateFileInput = Static<typeof CreateFileBody>;

// Optional bodies: the routes declare them so (`optionalBody`), which reads an absent one as `{}`;
// a body that is sent is an object (docs/errors.md §Request bodies).
export const CompleteFileBody = Type.Object(
  { md5: Type.Optional(Type.String({ pattern: '^[a-f0-9]{32}$', description: 'MD5 hex digest (lowercase) of the bytes.' })) },
  { additionalProperties: false },
);
export const CancelFileBody = Type.Object({}, { additionalProperties: false });

export const FileIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
