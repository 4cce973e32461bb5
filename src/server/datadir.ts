import {
  accessSync,
  constants,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { randomBase62 } from "../lib/ids.ts";

export class DataDirError extends Error {}

export interface DataDirPaths {
  root: string;
  database: string;
  serverSecret: string;
  /** The secret before the last rotation: links it signed stay valid until they expire. */
  previousServerSecret: string;
  adminToken: string;
  files: string;
  /** The {public_url} the running server answers at (written at each start; read by the CLI). */
  publicUrl: string;
}

/**
 * The secret files of a data dir (mode 0600), by their names in it: what a backup must carry so a
 * restored server keeps its admin token and verifies the links it signed before.
 */
export function secretFiles(paths: DataDirPaths): string[] {
  return [paths.serverSecret, paths.previousServerSecret, paths.adminToken];
}

export function dataDirPaths(dir: string): DataDirPaths {
  const root = resolve(dir);
  return {
    root,
    database: join(root, "gengate.db"),
    serverSecret: join(root, "server.secret"),
    previousServerSecret: join(root, "server.secret.previous"),
    adminToken: join(root, "admin.token"),
    files: join(root, "files"),
    publicUrl: join(root, "public-url"),
  };
}

/** Creates the data dir (0700) if needed and proves it is writable before anything is written to it. */
export function ensureWritableDataDir(paths: DataDirPaths): void {
  try {
    mkdirSync(paths.root, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new DataDirError(
      `data dir ${paths.root}: cannot create (${(err as NodeJS.ErrnoException).code ?? err})`,
    );
  }
  try {
    if (!statSync(paths.root).isDirectory())
      throw new DataDirError(`data dir ${paths.root}: not a directory`);
    accessSync(paths.root, constants.W_OK | constants.R_OK | constants.X_OK);
    const probe = join(paths.root, `.write-probe-${process.pid}`);
    writeFileSync(probe, "");
    unlinkSync(probe);
  } catch (err) {
    if (err instanceof DataDirError) throw err;
    throw new DataDirError(
      `data dir ${paths.root}: not writable (${(err as NodeJS.ErrnoException).code ?? err})`,
    );
  }
}

/**
 * Reads a secret file, or creates it (mode 0600, written to a temp file then renamed, so a crash
 * never leaves a half-written secret). Returns whether it was created now.
 */
export function readOrCreateSecret(path: string, make: () => string): { value: string; created: boolean } {
  try {
    const value = readFileSync(path, "utf8").trim();
    if (!value) throw new DataDirError(`${path}: empty secret file; delete it to have a new one made`);
    return { value, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const value = make();
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${value}\n`, { mode: 0o600, flag: "wx" });
  renameSync(tmp, path);
  return { value, created: true };
}

export const newAdminToken = () => `gat_${randomBase62(40)}`;
export const newServerSecret = () => randomBase62(48);

/** The link-signing secrets, current first, then the previous one if a rotation left it. */
export function linkSecrets(paths: DataDirPaths): string[] {
  const current = readFileSync(paths.serverSecret, "utf8").trim();
  try {
    const previous = readFileSync(paths.previousServerSecret, "utf8").trim();
    return previous ? [current, previous] : [current];
  } catch {
    return [current];
  }
}

/**
 * Rotates the signing secret: the current one becomes the previous one (still verifying), a new one
 * signs from the next reload. Each file is written to a temp name and renamed.
 */
export function rotateServerSecret(paths: DataDirPaths): void {
  const current = readFileSync(paths.serverSecret, "utf8").trim();
  writeSecretFile(paths.previousServerSecret, current);
  writeSecretFile(paths.serverSecret, newServerSecret());
}

/** `gengate secret admin-token` on SQLite: a new admin token in admin.token (returned, shown once). */
export function replaceAdminTokenFile(paths: DataDirPaths): string {
  const token = newAdminToken();
  writeSecretFile(paths.adminToken, token);
  return token;
}

/** Writes a secret file (mode 0600) to a temp name, then renames it over the old one. */
function writeSecretFile(path: string, value: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${value}\n`, { mode: 0o600, flag: "w" });
  renameSync(tmp, path);
}

/**
 * Records the {public_url} a starting server answers at, so `gengate user invite` on the same data
 * dir prints links to it: started with `--port 9000` and no public URL, the CLI (which sees no flag)
 * printed :8080, the default port, whatever port the server was on.
 */
export function writePublicUrlFile(paths: DataDirPaths, url: string): void {
  const tmp = `${paths.publicUrl}.${process.pid}.tmp`;
  writeFileSync(tmp, `${url}\n`, { mode: 0o644, flag: "w" });
  renameSync(tmp, paths.publicUrl);
}

/** The {public_url} the last start recorded, or null (none, unreadable, or not an http(s) URL). */
export function readPublicUrlFile(paths: DataDirPaths): string | null {
  try {
    const url = readFileSync(paths.publicUrl, "utf8").trim();
    return /^https?:\/\/[^\s/]+(\/[^\s]*)?$/.test(url) && url.length <= 2048 ? url : null;
  } catch {
    return null;
  }
}
