// autocannon ships no types; the bench uses only its promise API.
declare module 'autocannon' {
  const autocannon: (opts: Record<string, unknown>) => Promise<any>;
  export default autocannon;
}
