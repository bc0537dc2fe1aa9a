// SQL of workspaces.
import type { Executor } from '../db/index.ts';
import type { WorkspacesTable } from './tables.ts';

export type WorkspaceRow = WorkspacesTable;

export async function insertWorkspace(db: Executor, row: WorkspaceRow): Promise<void> {
  await db.insertInto('workspaces').values(row).execute();
}

/** Newest first. */
export async function listWorkspaces(db: Executor): Promise<WorkspaceRow[]> {
  return db.selectFrom('workspaces').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function workspaceExists(db: Executor, id: string): Promise<boolean> {
  return (await db.selectFrom('workspaces').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function setDefaultCountry(db: Executor, id: string, country: string | null): Promise<void> {
  await db.updateTable('workspaces').set({ default_country: country }).where('id', '=', id).execute();
}

export async function findWorkspace(db: Executor, id: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}
