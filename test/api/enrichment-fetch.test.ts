// The website provider's parts (docs/enrichment.md §The website provider): the address checks,
// the fetch limits (redirects, size, time), the HTML reading and robots.txt.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { FETCH_LIMITS, FetchRefused, safeFetch } from '../../src/enrichment/fetch.ts';
import { deliver } from '../../src/webhooks/sender.ts';
import { isSpecialAddress } from '../../src/lib/public-address.ts';
import { readPage } from '../../src/enrichment/html.ts';
import { robotsAllow } from '../../src/enrichment/robots.ts';
import { websiteProvider } from '../../src/enrichment/website.ts';

let server: Server;
let base = '';
before(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const hops = Number(url.searchParams.get('hops') ?? 0);
    if (url.pathname === '/hop') {
      res.writeHead(302, { location: hops > 1 ? `/hop?hops=${hops - 1}` : '/page' }).end();
    } else if (url.pathname === '/big') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('x'.repeat(2 * 1024 * 1024));
    } else if (url.pathname === '/slow') {
      setTimeout(() => res.writeHead(200).end('late'), FETCH_LIMITS.timeoutMs + 1000).unref();
    } else res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>${String(req.headers['user-agent'])}</title>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

const allowed = { userAgent: 'RolodexEnrichment/1.0 (+test)', allowPrivate: true };
const refusedOnly = { userAgent: 'RolodexEnrichment/1.0 (+test)', allowPrivate: false };

test('private, loopback, link-local and special addresses are recognised; public ones are not', () => {
  for (const a of [
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::7f00:1',
    '::ffff:0:a9fe:a9fe',
    '2002:7f00:1::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '64:ff9b:1::a00:1',
    '2001:db8::1',
    '3fff:fff::1',
    'not an ip',
  ])
    assert.equal(isSpecialAddress(a), true, a);
  for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '3fff:1000::1', '64:ff9c::1'])
    assert.equal(isSpecialAddress(a), false, a);
});

// docs/enrichment.md §The website provider: the blocks IANA's special-purpose registries mark not
// globally reachable, or deprecated, that passed as public; each with its first and last address,
// and globally reachable addresses next to them.
test('6to4 relay anycast, SRv6 SIDs, benchmarking, dummy and ORCHID blocks are refused; their neighbours are not', () => {
  for (const a of [
    '192.88.99.0',
    '192.88.99.1',
    '192.88.99.255',
    '::ffff:192.88.99.1',
    '5f00::',
    '5f00::1',
    '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:2::1',
    '2001:2:0:ffff:ffff:ffff:ffff:ffff',
    '100:0:0:1::1',
    '2001:10::1',
    '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff',
  ])
    assert.equal(isSpecialAddress(a), true, a);
  // Globally reachable: ordinary IPv4 space, AMT (2001:3::/32) and ORCHIDv2 (2001:20::/28).
  for (const a of ['192.88.98.255', '192.88.100.0', '2001:3::1', '2001:20::1']) assert.equal(isSpecialAddress(a), false, a);
});

test('without ENRICH_ALLOW_PRIVATE a loopback address is refused, as a literal and after DNS resolution', async () => {
  const port = new URL(base).port;
  for (const url of [`${base}/`, `http://localhost:${port}/`, `http://[::1]:${port}/`, `http://0x7f000001:${port}/`])
    await assert.rejects(safeFetch(new URL(url), refusedOnly), FetchRefused, url);
});

test('a connection another request was allowed to open is never reused by a fetch that may not reach it', async () => {
  // With WEBHOOK_ALLOW_PRIVATE and without ENRICH_ALLOW_PRIVATE, a webhook delivery to a host on
  // the private network leaves a kept-alive socket; a fetch of the same host and port must still
  // be judged by its own lookup (docs/events.md §Webhooks), and in the other direction as well.
  const url = `http://localhost:${new URL(base).port}/`;
  const secret = `whsec_${'A'.repeat(44)}`;
  for (let round = 0; round < 2; round++) {
    assert.equal((await deliver({ url, secret, eventId: 'evt_x', body: '{}', timeoutMs: 5000, allowPrivate: true })).ok, true);
    await assert.rejects(safeFetch(new URL(url), refusedOnly), FetchRefused);
    assert.equal((await safeFetch(new URL(url), allowed)).status, 200);
    assert.deepEqual(await deliver({ url, secret, eventId: 'evt_x', body: '{}', timeoutMs: 5000, allowPrivate: false }), {
      ok: false,
      error: 'PRIVATE_TARGET',
    });
  }
});

test('the fetch sends the User-Agent, follows up to 3 redirects and refuses a fourth', async () => {
  const three = await safeFetch(new URL(`${base}/hop?hops=3`), allowed);
  assert.equal(three.status, 200);
  assert.equal(three.url.pathname, '/page');
  assert.match(three.body, /RolodexEnrichment\/1\.0/);
  await assert.rejects(safeFetch(new URL(`${base}/hop?hops=4`), allowed), /more than 3 redirects/);
  await assert.rejects(safeFetch(new URL('file:///etc/passwd'), allowed), FetchRefused);
  await assert.rejects(safeFetch(new URL(`http://user:pw@127.0.0.1:${new URL(base).port}/`), allowed), FetchRefused);
});

test('a body is cut at 1 MiB and a fetch gives up after 5 s', async () => {
  const big = await safeFetch(new URL(`${base}/big`), allowed);
  assert.equal(big.truncated, true);
  assert.equal(big.body.length, FETCH_LIMITS.maxBytes);
  const started = Date.now();
  await assert.rejects(safeFetch(new URL(`${base}/slow`), allowed));
  const took = Date.now() - started;
  assert.ok(took >= FETCH_LIMITS.timeoutMs - 100 && took < FETCH_LIMITS.timeoutMs + 900, `took ${took} ms`);
});

test('the page is read by a parser: title, description, logo and profiles; comments and scripts are not links', () => {
  const html = `<html><head><base href="https://cdn.acme.test/"><TITLE>Acme &mdash;  Anvils</TITLE>
    <meta property="og:description" content="Anvils since 1949"><link rel="shortcut icon" href="favicon.ico">
    <script>var s = '<a href="https://twitter.com/fake">';</script></head>
    <body><!-- <a href="https://linkedin.com/company/old"> --><a href='https://www.linkedin.com/company/acme/'>in</a>
    <a href="https://twitter.com/intent/tweet?text=hi">tweet</a><a href="https://facebook.com/sharer/sharer.php?u=x">share</a>
    <a href="https://evil.test/?next=https://instagram.com/x">no</a></body></html>`;
  const facts = readPage(html, new URL('https://acme.test/'));
  assert.equal(facts.title, 'Acme — Anvils');
  assert.equal(facts.description, 'Anvils since 1949');
  assert.equal(facts.logo, 'https://cdn.acme.test/favicon.ico');
  assert.deepEqual(facts.social, { linkedIn: 'https://linkedin.com/company/acme' });
});

test('a profile is a link its field takes as one: share buttons and login pages before it do not hide it', () => {
  const html = `<a href="https://www.linkedin.com/shareArticle?mini=true&amp;url=https://acme.test">share</a>
    <a href="https://www.linkedin.com/sharing/share-offsite/?url=https://acme.test">share</a>
    <a href="https://www.linkedin.com/company/acme/">in</a>
    <a href="https://www.instagram.com/accounts/login/">log in</a><a href="https://www.instagram.com/acme.anvils/">ig</a>
    <a href="https://www.facebook.com/profile.php?id=100064">fb</a>`;
  assert.deepEqual(readPage(html, new URL('https://acme.test/')).social, {
    linkedIn: 'https://linkedin.com/company/acme',
    instagram: 'https://www.instagram.com/acme.anvils',
    facebook: 'https://facebook.com/profile.php?id=100064',
  });
});

test('an empty description, logo or icon tag says nothing: the next source in order counts', () => {
  const page = new URL('https://acme.test/');
  const html = `<meta name="description" content=""><meta property="og:description" content="Anvils since 1949">
    <meta property="og:logo" content="  "><link rel="logo" href=" "><link rel="icon" href="/favicon.ico">`;
  const facts = readPage(html, page);
  assert.equal(facts.description, 'Anvils since 1949');
  assert.equal(facts.logo, 'https://acme.test/favicon.ico');
});

test('a page is read in the charset its Content-Type names, else the one its own <meta> declares', async (t) => {
  // Latin-1 "Café Olé" named by the header; Shift_JIS 日本 declared by the page alone.
  const pages = [
    { type: 'text/html; charset=ISO-8859-1', body: Buffer.from('<title>Caf\xe9 Ol\xe9</title>', 'latin1'), title: 'Café Olé' },
    {
      type: 'text/html',
      body: Buffer.concat([
        Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"><title>'),
        Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
        Buffer.from('</title>'),
      ]),
      title: '日本',
    },
    { type: 'text/html', body: Buffer.from('<meta charset="utf-8"><title>Müller</title>'), title: 'Müller' },
    // A byte order mark names the charset over the Content-Type, as a browser reads it.
    { type: 'text/html; charset=ISO-8859-1', body: Buffer.from('\ufeff<title>Müller</title>'), title: 'Müller' },
    { type: 'text/html', body: Buffer.from('\ufeff<title>Ångström</title>', 'utf16le'), title: 'Ångström' },
  ];
  for (const page of pages) {
    const site = createServer((req, res) => (req.url === '/' ? res.writeHead(200, { 'content-type': page.type }).end(page.body) : res.writeHead(404).end()));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    t.after(() => site.close());
    const subject = {
      entityType: 'account' as const,
      id: 'acc_1',
      fields: { $website: [`http://127.0.0.1:${(site.address() as AddressInfo).port}`] },
      relationships: new Map(),
    };
    const found = await websiteProvider.lookUp(subject, ['$name'], { ...allowed, signal: AbortSignal.timeout(5000) });
    assert.equal(found.$name, page.title, page.type);
  }
});

test('robots.txt: our group over *, longest rule wins, Allow on a tie, wildcards and $', () => {
  assert.equal(robotsAllow('User-agent: *\nDisallow: /', 'RolodexEnrichment', '/'), false);
  assert.equal(robotsAllow('User-agent: *\nDisallow: /\n\nUser-agent: rolodexenrichment\nAllow: /', 'RolodexEnrichment', '/'), true);
  assert.equal(robotsAllow('User-agent: RolodexEnrichment\nDisallow: /private\n', 'RolodexEnrichment', '/'), true);
  assert.equal(robotsAllow('User-agent: *\nDisallow: /*.php$\nAllow: /$\nDisallow: /', 'RolodexEnrichment', '/'), true);
  assert.equal(robotsAllow('User-agent: a\nUser-agent: *\nDisallow: /\n', 'RolodexEnrichment', '/'), false);
  assert.equal(robotsAllow('', 'RolodexEnrichment', '/'), true);
  assert.equal(robotsAllow('# nothing\nUser-agent: *\nDisallow:\n', 'RolodexEnrichment', '/'), true);
});

test('ENRICHMENT and MCP are validated at start-up; ENRICHMENT=off starts no run', async (t) => {
  const DATA_DIR = mkdtempSync(join(tmpdir(), 'rolodex-config-'));
  t.after(() => rmSync(DATA_DIR, { recursive: true, force: true }));
  assert.equal(loadConfig({ DATA_DIR }).enrichment.mode, 'manual');
  assert.equal(loadConfig({ DATA_DIR }).mcp, true);
  assert.equal(loadConfig({ DATA_DIR, MCP: 'off' }).mcp, false);
  assert.equal(loadConfig({ DATA_DIR, ENRICHMENT: 'on-create' }).enrichment.mode, 'on-create');
  assert.throws(() => loadConfig({ DATA_DIR, ENRICHMENT: 'always' }), /ENRICHMENT must be one of off, manual, on-create/);
  assert.throws(() => loadConfig({ DATA_DIR, MCP: 'maybe' }), /MCP must be on or off/);
  assert.throws(() => loadConfig({ DATA_DIR, ENRICH_TIMEOUT_MS: '5000', ENRICH_LEASE_MS: '5000' }), /ENRICH_LEASE_MS/);
});
