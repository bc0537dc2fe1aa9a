// The providers runs use, in order: a target filled by one is not asked of the next. To add one,
// implement EnrichmentProvider (./provider.ts) in a module of its own and list it here
// (docs/enrichment.md §Adding a provider).
import type { EnrichmentProvider } from './provider.ts';
import { websiteProvider } from './website.ts';

export const PROVIDERS: readonly EnrichmentProvider[] = [websiteProvider];

/** The User-Agent of every outside request; robots.txt groups name its first word. */
export function userAgent(publicBaseUrl: string): string {
  return `RolodexEnrichment/1.0 (+${publicBaseUrl})`;
}
