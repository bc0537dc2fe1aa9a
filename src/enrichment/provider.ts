// The contract of an enrichment provider (docs/enrichment.md §Adding a provider): what it can
// fill, whether a record holds what it needs, and the lookup itself. A provider only reads the
// outside world and returns values; the run decides what is written (only empty fields unless
// named, through the records engine's own checks) and when, under its lease.
import { unrooted } from '../lib/email.ts';
import type { ValueType } from '../lib/value-types.ts';
import type { RunRow } from './repository.ts';

export type RecordType = RunRow['entity_type'];

/** The record a run enriches, as stored: values by field key, own relationships by key. */
export interface Subject {
  entityType: RecordType;
  id: string;
  fields: Readonly<Record<string, unknown>>;
  relationships: ReadonlyMap<string, readonly string[]>;
}

export interface ProviderEnv {
  /** The User-Agent every outside request sends. */
  userAgent: string;
  /** Whether private, loopback and link-local addresses may be reached (tests only). */
  allowPrivate: boolean;
  /** Aborted when the run times out. */
  signal: AbortSignal;
}

export interface EnrichmentProvider {
  readonly name: string;
  /** The field keys of `entityType` it can fill (system `$…` keys, or custom keys a workspace may define). */
  fills(entityType: RecordType): readonly string[];
  /**
   * The value types a custom key it fills must have (`logo`: URL): a workspace's field of that key
   * of another type is not one it fills, so no run targets it and a request naming it is refused
   * (docs/enrichment.md §What a run fills). A key not named here is filled whatever its type.
   */
  readonly valueTypes?: Readonly<Record<string, readonly ValueType[]>>;
  /** Whether the record holds what a lookup needs (a website, an e-mail domain). */
  canLookUp(subject: Subject): boolean;
  /** Values found for `targets`, by field key; a target it found nothing for is absent. */
  lookUp(subject: Subject, targets: readonly string[], env: ProviderEnv): Promise<Record<string, unknown>>;
}

/** The first value of a field that holds one value or a list. */
export function firstValue(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The domain of a contact's first e-mail address, lower-cased and without a final dot
 * (`ann@acme.test.` is on `acme.test`, docs/records.md §E-mail addresses); null when it has none.
 */
export function emailDomain(subject: Subject): string | null {
  const email = firstValue(subject.fields.$email);
  if (typeof email !== 'string') return null;
  const at = email.lastIndexOf('@');
  const domain =
    at === -1
      ? ''
      : email
          .slice(at + 1)
          .trim()
          .toLowerCase();
  return domain.includes('.') ? unrooted(domain) : null;
}
