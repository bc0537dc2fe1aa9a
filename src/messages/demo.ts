// Demo channels of every visibility, with messages, for `rolodex demo`. Ann (admin) is in every
// channel; Bob (member) only in #general, so his key shows all three access outcomes.
import type { DemoPart } from '../import/demo-part.ts';

const HOUR = 3_600_000;

export const messagesPart: DemoPart = {
  objects: () => {
    const base = Date.parse('2026-03-01T09:00:00.000Z');
    const channels = [
      { object: 'channel', externalId: 'ch-general', provider: 'slack', name: 'general', visibility: 'public', members: ['u-ann', 'u-bob'] },
      { object: 'channel', externalId: 'ch-deals', provider: 'slack', name: 'deals', visibility: 'restricted', members: ['u-ann'] },
      { object: 'channel', externalId: 'ch-board', provider: 'slack', name: 'board', visibility: 'private', members: ['u-ann'] },
    ];
    const texts: Array<[string, string, 'TEXT' | 'HTML']> = [
      ['ch-general', 'Welcome to the demo workspace!', 'TEXT'],
      ['ch-general', 'Lunch is on <b>Friday</b>.', 'HTML'],
      ['ch-deals', 'Globex renewal is at risk; discount approved up to 15%.', 'TEXT'],
      ['ch-deals', 'Initech signed the order form.', 'TEXT'],
      ['ch-board', 'Q2 plan: hire two account executives.', 'TEXT'],
      ['ch-board', 'Board meeting moved to Thursday.', 'TEXT'],
    ];
    const messages = texts.map(([channel, text, valueType], i) => ({
      object: 'message',
      externalId: `m-${i + 1}`,
      channel,
      fields: {
        $text: { value: text, valueType },
        $sentAt: { value: new Date(base + i * HOUR).toISOString(), valueType: 'DATETIME' },
        $providerThreadId: { value: i % 2 === 1 ? `thread-${i}` : null, valueType: 'TEXT' },
      },
      // The restricted channel's attachment shows METADATA withholding $files.
      ...(channel === 'ch-deals' && i === 2 ? { relationships: { $files: { objectType: 'file', values: ['file-chat-screenshot'] } } } : {}),
    }));
    return [...channels, ...messages];
  },
  after: async () => ['curl -s -H "Authorization: Bearer {key}" -H "Service-Version: 2026-03-01" "{base}/v1/messages?limit=5"'],
};
