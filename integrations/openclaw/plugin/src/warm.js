// @ts-check
/**
 * The warm way to reach memoracle: `memoracle serve` keeps one engine open behind a unix
 * socket, so a turn does not pay a Python start and a model load (seconds) twice.
 *
 * The plugin starts the server when nothing answers on the socket (detached, its output
 * in serve.log beside the socket), starts it again if it died (waiting longer after each
 * failure, up to a minute), and for a call it cannot make that way runs the CLI instead.
 * A request that reached the server and got no answer in time is not retried: the turn
 * goes on without it.
 */

import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";
import { connect } from "node:net";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** The socket's file name in memoracle's home, as `memoracle serve` names it. */
export const SOCKET_NAME = "serve.sock";
/** The server's output, beside the socket. */
export const LOG_NAME = "serve.log";
/** A server the plugin started exits after this long without a request. */
export const IDLE_EXIT_SECONDS = 3600;
/** Longest wait for a server just started to answer. */
export const START_TIMEOUT_MS = 20000;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60000;

/** The socket was reached but the request failed or timed out: no CLI retry. */
export class WarmRequestError extends Error {}

/**
 * memoracle's home as memoracle finds it: the config's, else $MEMORACLE_HOME, else the
 * per-user data dir (platformdirs: $XDG_DATA_HOME/memoracle, ~/.local/share/memoracle,
 * ~/Library/Application Support/memoracle on macOS).
 * @param {string | undefined} home the config's home, already resolved
 * @param {Record<string, string | undefined>} env
 */
export function memoracleHome(home, env = process.env) {
  if (home) return home;
  if (env.MEMORACLE_HOME) return env.MEMORACLE_HOME;
  if (process.platform === "darwin") return join(homedir(), "Library", "Application Support", "memoracle");
  return join(env.XDG_DATA_HOME || join(homedir(), ".local", "share"), "memoracle");
}

/**
 * Send one request line on the socket and resolve with the `result` of the answer;
 * reject with `code` ENOENT / ECONNREFUSED when nothing listens (the caller may start a
 * server), with a WarmRequestError when the server was reached but failed or was late.
 * @param {string} path
 * @param {Record<string, unknown>} request
 * @param {number} timeoutMs
 * @returns {Promise<Record<string, any>>}
 */
export function request(path, request, timeoutMs) {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let buffer = "";
    let connected = false;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        connected
          ? new WarmRequestError(`memoracle serve at ${path}: no answer within ${timeoutMs} ms`)
          : Object.assign(new Error(`${path}: no connection within ${timeoutMs} ms`), { code: "ETIMEDOUT" }),
      );
    }, timeoutMs);
    socket.setEncoding("utf8");
    socket.on("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on("data", (chunk) => {
      buffer += chunk;
      const end = buffer.indexOf("\n");
      if (end < 0) return;
      clearTimeout(timer);
      socket.end();
      let reply;
      try {
        reply = JSON.parse(buffer.slice(0, end));
      } catch {
        reject(new WarmRequestError(`memoracle serve answered something that is not JSON`));
        return;
      }
      if (reply && reply.ok === true && reply.result && typeof reply.result === "object") {
        resolve(reply.result);
      } else {
        reject(new WarmRequestError(`memoracle serve: ${String(reply?.error ?? "no result")}`));
      }
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(connected ? new WarmRequestError(`memoracle serve at ${path}: ${error.message}`) : error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      if (connected) reject(new WarmRequestError(`memoracle serve at ${path} closed the connection`));
    });
  });
}

/**
 * Keeps one `memoracle serve` reachable at `socket`: starts it when nothing answers,
 * again when it died, backing off after each failed start.
 */
export class WarmServer {
  /** @type {Promise<void> | undefined} */ #starting;
  #failures = 0;
  #retryAt = 0;
  /** @type {number | undefined} */ pid;

  /**
   * @param {{ command: string, args: string[], socket: string, now?: () => number }} options
   *   `args`: the arguments of `serve` (home, scope) before `--socket`
   */
  constructor(options) {
    this.command = options.command;
    this.args = [...options.args, "serve", "--socket", options.socket, "--idle-exit", String(IDLE_EXIT_SECONDS)];
    this.socket = options.socket;
    this.logFile = join(dirname(options.socket), LOG_NAME);
    this.now = options.now ?? Date.now;
  }

  /** Whether a start is due: none failed lately. */
  get ready() {
    return this.now() >= this.#retryAt;
  }

  /**
   * One request; starts the server first if nothing listens. Rejects with a
   * WarmRequestError when the server got the request, with an Error when it could not
   * be reached or started (the caller then runs the CLI).
   * @param {Record<string, unknown>} message
   * @param {number} timeoutMs
   */
  async call(message, timeoutMs) {
    const deadline = this.now() + timeoutMs;
    try {
      return await request(this.socket, message, timeoutMs);
    } catch (error) {
      if (error instanceof WarmRequestError) throw error;
      if (!this.ready) throw new Error(`memoracle serve is not running (${reasonOf(error)}); next start in ${Math.ceil((this.#retryAt - this.now()) / 1000)} s`);
    }
    await this.start(Math.max(100, Math.min(START_TIMEOUT_MS, deadline - this.now())));
    return request(this.socket, message, Math.max(100, deadline - this.now()));
  }

  /**
   * Start the server (once, however many calls wait for it) and wait until it answers.
   * @param {number} timeoutMs
   */
  start(timeoutMs) {
    if (!this.#starting) {
      this.#starting = this.#start(timeoutMs).then(
        () => {
          this.#failures = 0;
          this.#retryAt = 0;
        },
        (error) => {
          this.#failures += 1;
          this.#retryAt = this.now() + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.#failures - 1));
          throw error;
        },
      ).finally(() => {
        this.#starting = undefined;
      });
    }
    return this.#starting;
  }

  /** @param {number} timeoutMs */
  async #start(timeoutMs) {
    const folder = dirname(this.socket);
    if (!existsSync(folder)) throw new Error(`cannot start memoracle serve: no folder ${folder}`);
    const out = openSync(this.logFile, "a", 0o600);
    /** @type {import("node:child_process").ChildProcess} */
    let child;
    try {
      child = spawn(this.command, this.args, { detached: true, stdio: ["ignore", out, out], windowsHide: true });
    } finally {
      closeSync(out);
    }
    /** @type {string | undefined} */
    let exited;
    child.on("error", (error) => {
      exited = /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT" ? `${this.command}: not found` : error.message;
    });
    child.on("exit", (code, signal) => {
      exited ??= `it exited with ${signal ?? `status ${code}`} (see ${this.logFile})`;
    });
    child.unref();
    this.pid = child.pid;
    const deadline = this.now() + timeoutMs;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (exited) throw new Error(`memoracle serve did not start: ${exited}`);
      try {
        await request(this.socket, { op: "ping" }, 1000);
        return;
      } catch (error) {
        if (error instanceof WarmRequestError) throw error;
      }
      if (this.now() > deadline) {
        throw new Error(`memoracle serve did not answer within ${timeoutMs} ms (see ${this.logFile})`);
      }
    }
  }
}

/** @param {unknown} error */
function reasonOf(error) {
  const code = /** @type {NodeJS.ErrnoException} */ (error)?.code;
  if (code === "ENOENT") return "no socket";
  if (code === "ECONNREFUSED") return "nothing listens on the socket";
  return error instanceof Error ? error.message : String(error);
}
