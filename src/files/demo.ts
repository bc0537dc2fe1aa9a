// The files of `rolodex demo`: one uploaded through the API (listable), one from the app and one
// chat attachment (fetchable by id, never listed), plus a workspace Knowledge entry. Other demo
// parts may link them through `$files` by these externalIds: file-handbook, file-logo,
// file-chat-screenshot.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DemoPart } from '../import/demo-part.ts';
import { addActiveEntry } from '../knowledge/repository.ts';

// A 1×1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

export function filesDemoPart(): DemoPart {
  let dir: string | null = null;
  return {
    objects() {
      dir = mkdtempSync(join(tmpdir(), 'rolodex-demo-files-'));
      const handbook = join(dir, 'handbook.md');
      writeFileSync(handbook, '# Acme sales handbook\n\nQualify early, follow up within a day, write everything down.\n');
      const logo = join(dir, 'logo.png');
      writeFileSync(logo, PNG);
      const shot = join(dir, 'screenshot.png');
      writeFileSync(shot, PNG);
      return [
        { object: 'file', externalId: 'file-handbook', source: 'api', filename: 'Sales handbook.md', mimeType: 'text/markdown', path: handbook },
        { object: 'file', externalId: 'file-logo', source: 'app', filename: 'logo.png', mimeType: 'image/png', path: logo },
        { object: 'file', externalId: 'file-chat-screenshot', source: 'chat_attachment', filename: 'screenshot.png', mimeType: 'image/png', path: shot },
      ];
    },
    async after(ctx) {
      if (dir) rmSync(dir, { recursive: true, force: true });
      const handbook = ctx.imported.ids.file?.['file-handbook'];
      if (handbook) await addActiveEntry(ctx.db, ctx.actor.workspaceId, handbook, { type: 'workspace', userId: null }, ctx.now);
      const h = '-H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01"';
      return [
        `curl -s ${h} {base}/v1/files`,
        `curl -s ${h} {base}/v1/files/${handbook}/url`,
        `curl -s ${h} -H "Content-Type: application/json" -d '{"filename":"hello.txt","mimeType":"text/plain","sizeBytes":6}' {base}/v1/files   # then PUT the bytes to uploadUrl with uploadHeaders and POST /v1/files/<id>/complete`,
        `rolodex knowledge list --workspace ${ctx.actor.workspaceId}`,
      ];
    },
  };
}
