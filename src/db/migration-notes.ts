// What a data migration reports about its work (how many values it changed, how many it had to
// keep as they were), for whoever ran the migrations to print: `rolodex migrate` on its output,
// the server in its `migrations applied` log line. Collected per process; taken once.
export interface MigrationNote {
  migration: string;
  message: string;
  counts: Record<string, number>;
}

const notes: MigrationNote[] = [];

export function noteMigration(note: MigrationNote): void {
  notes.push(note);
}

/** The notes since the last call, oldest first. */
export function takeMigrationNotes(): MigrationNote[] {
  return notes.splice(0);
}
