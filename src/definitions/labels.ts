// Labels of definitions and options, as every writer of them checks and compares them
// (docs/records.md §Definitions).
import { longerThan } from '../lib/chars.ts';
import { InputError } from '../lib/errors.ts';
import { labelKey } from '../lib/fold.ts';

/** What of an option its label's rules read. */
interface Labelled {
  label: string;
}

/**
 * The bounds of a definition's label (1 to 255 characters, not only white space) and description
 * (at most 10,000), the same whoever writes them, so that `rolodex export` writes only what the
 * import kind `definition` reads back (docs/import.md §definition).
 */
export function checkLabel(label: string, description?: string | null): void {
  if (label.trim() === '' || longerThan(label, 255)) throw new InputError('must be 1 to 255 characters, not only white space', 'label');
  if (description != null && longerThan(description, 10_000)) throw new InputError('must be at most 10,000 characters', 'description');
}

/**
 * The input with its label trimmed: a label is stored without outer white space, as a rename
 * stores it, so that a value written with the label as shown matches it (docs/records.md
 * §Definitions).
 */
export function outerSpaceless<T extends { label: string }>(input: T): T {
  return { ...input, label: input.label.trim() };
}

/**
 * The option of `options` whose label is `label` as a select filter compares labels (ignoring case
 * and runs of white space, docs/filtering.md), or undefined. A field's options never share such a
 * label: a select value or filter naming one by its label then names one option.
 */
export function clashingOption<O extends Labelled>(options: readonly O[], label: string): O | undefined {
  const key = labelKey(label);
  return options.find((o) => o.label === label) ?? options.find((o) => labelKey(o.label) === key);
}

/**
 * The option a label names as a person writes it (docs/import.md §CSV): the one of that exact
 * label, else the one whose label is equal ignoring case and runs of white space, as a select
 * filter matches labels (docs/filtering.md). A field's options never share such a label
 * (clashingOption), so this names one option; were several stored alike, it names none.
 */
export function optionNamed<O extends Labelled>(options: readonly O[], label: string): O | undefined {
  const exact = options.find((o) => o.label === label);
  if (exact) return exact;
  const key = labelKey(label);
  const loose = options.filter((o) => labelKey(o.label) === key);
  return loose.length === 1 ? loose[0] : undefined;
}

/** Why `label` cannot join a field that has `clash` (clashingOption). */
export function clashMessage(label: string, clash: Labelled): string {
  if (clash.label === label) return `option "${label}" exists`;
  return `"${label}" differs from option "${clash.label}" only in case or white space: a label names one option`;
}
