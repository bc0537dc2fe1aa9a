// node:http and node:https for outbound requests (webhook deliveries, enrichment fetches), taken
// as CommonJS exports rather than imported. An ES import of a built-in module reads every one of
// its exports, and node:http's WebSocket, CloseEvent and MessageEvent are getters that load the
// fetch implementation Node bundles (undici, with the web streams), resident for the life of a
// process that never uses it (docs/performance.md §Loading only what is configured).
export const httpRequest = process.getBuiltinModule('node:http').request;
export const httpsRequest = process.getBuiltinModule('node:https').request;
