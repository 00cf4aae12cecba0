// @ts-check
/**
 * Where a workspace memory file comes from, as OpenClaw's memory runtime contract asks
 * (`MemoryPluginRuntime.classifyWorkspaceMemoryPaths`, OpenClaw 2026.9.x).
 *
 * OpenClaw puts MEMORY.md and USER.md into a run's automatic context only when the
 * memory slot's runtime classifies their origin as `owner` or `agent`; a runtime without
 * the classifier gets them left out ("excluding automatic memory context: selected
 * memory runtime does not support provenance classification"). memoracle classifies
 * them exactly as memory-core does (its `resolveMemoryPathClassification`):
 *
 * - only a file strictly inside the workspace (after resolving links) is classified,
 *   anything else is `untrusted`; a file the gateway already read (`readSources`) is
 *   judged by the canonical path it was read at, and one read at no safe canonical path
 *   is `untrusted`;
 * - DREAMS.md, dreams.md and memory/dreaming/…, memory/.dreams/… are `system`;
 * - the workspace memory files — MEMORY.md, memory.md, USER.md, users/<id>/USER.md and
 *   every `.md` under memory/ (the daily notes and memoracle's topic files) — keep the
 *   origin OpenClaw recorded when its own tools wrote them (a file an untrusted session
 *   wrote stays `untrusted`), else they are `agent`: the operator's workspace;
 * - every other path is `untrusted`.
 *
 * The recorded origins live in OpenClaw's state; the caller gives the reader
 * (`readRecorded`, OpenClaw's `readMemoryArtifactProvenance`). When it fails the whole
 * classification fails, and OpenClaw then leaves the files out: never more trust than
 * memory-core would give.
 */

import { realpath } from "node:fs/promises";
import { isAbsolute, posix, relative, resolve, sep, win32 } from "node:path";

/** @typedef {"owner" | "agent" | "untrusted" | "system"} OriginClass */

/**
 * OpenClaw's recorded origin of one workspace memory file, if it recorded one.
 * @typedef {(params: { workspaceDir: string, relativePath: string }) =>
 *   Promise<{ originClass: OriginClass } | undefined | null>} ReadRecorded
 */

const CURATED_ROOTS = new Set(["MEMORY.md", "memory.md", "USER.md"]);
const DREAM_ROOTS = new Set(["DREAMS.md", "dreams.md"]);
const PERSONAL_USER = /^users\/[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}\/USER\.md$/;

/**
 * A canonical path the gateway read a file at, if it is a safe workspace-relative one.
 * @param {unknown} path
 */
function safeCanonical(path) {
  if (typeof path !== "string" || !path || path === "." || path === ".." || path.startsWith("../")) return undefined;
  if (posix.isAbsolute(path) || win32.isAbsolute(path) || path.includes("\\") || path.includes("\0")) return undefined;
  return posix.normalize(path) === path ? path : undefined;
}

/**
 * The workspace-relative path of `relativePath` once links are resolved, if the file
 * exists strictly inside the workspace.
 * @param {string} workspaceDir
 * @param {string} relativePath
 */
async function insidePath(workspaceDir, relativePath) {
  let root;
  let file;
  try {
    [root, file] = await Promise.all([realpath(workspaceDir), realpath(resolve(workspaceDir, relativePath))]);
  } catch {
    return undefined;
  }
  const rel = relative(root, file);
  if (!rel || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

/**
 * The origin of one workspace path (see the module's comment).
 * @param {{ workspaceDir: string, relativePath: string, canonical?: { path: string | undefined } }} params
 *   `canonical`: the gateway already read the file, at this path (undefined: no safe one)
 * @param {ReadRecorded} readRecorded
 * @returns {Promise<OriginClass>}
 */
export async function classifyMemoryPath(params, readRecorded) {
  const rel = params.canonical
    ? safeCanonical(params.canonical.path)
    : await insidePath(params.workspaceDir, params.relativePath);
  if (!rel) return "untrusted";
  const segments = rel.split("/");
  const single = segments.length === 1;
  if ((single && DREAM_ROOTS.has(rel)) || (segments[0] === "memory" && (segments[1] === "dreaming" || segments[1] === ".dreams"))) {
    return "system";
  }
  const memoryFile =
    (single && CURATED_ROOTS.has(rel)) || PERSONAL_USER.test(rel) || (segments[0] === "memory" && rel.endsWith(".md"));
  if (!memoryFile) return "untrusted";
  const recorded = await readRecorded({ workspaceDir: params.workspaceDir, relativePath: rel });
  return recorded?.originClass ?? "agent";
}

/**
 * The runtime's `classifyWorkspaceMemoryPaths`: each path with its origin class.
 * @param {ReadRecorded} readRecorded
 */
export function workspaceClassifier(readRecorded) {
  /**
   * @param {{ workspaceDir: string, relativePaths: string[],
   *   readSources?: readonly { relativePath: string, canonicalRelativePath?: string }[] }} params
   */
  return async function classifyWorkspaceMemoryPaths(params) {
    const sources = params.readSources;
    return Promise.all(
      params.relativePaths.map(async (relativePath) => {
        const canonical = sources !== undefined ? { path: sources.find((s) => s.relativePath === relativePath)?.canonicalRelativePath } : undefined;
        const originClass = await classifyMemoryPath({ workspaceDir: params.workspaceDir, relativePath, canonical }, readRecorded);
        return { relativePath, originClass };
      }),
    );
  };
}
