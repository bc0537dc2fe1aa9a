// Request and response shapes of the custom-object API (docs/activities.md §Custom objects).
import { Type } from '@sinclair/typebox';

export const ObjectTypeList = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          objectType: Type.String({ description: 'The slug used in paths.' }),
          label: Type.String({ description: 'Display name.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'ObjectTypeList', additionalProperties: false },
);

const Slug = Type.String({ minLength: 1, maxLength: 255, description: 'The slug of a custom object type.' });

export const SlugParams = Type.Object({ entitySlug: Slug }, { additionalProperties: false });

export const SlugIdParams = Type.Object({ entitySlug: Slug, id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
