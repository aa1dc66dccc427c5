/**
 * An MCP call's provenance as the details show it: the twin of durable_nb.durable.mcp.provenance_line
 * (its `name=` label and the server's own name and version, its masked command or URL, the round trip,
 * the approval), and what a result answered from stored results (`replay --tools reuse`) copies.
 */
import { duration, short } from "./format";
import type { Message } from "./protocol";

type McpRecord = Record<string, unknown>;
const isRecord = (x: unknown): x is McpRecord => typeof x === "object" && x !== null && !Array.isArray(x);
const str = (x: unknown): string => (x === undefined || x === null ? "" : String(x));

/** One record as one line: "clock (mcp-time 1.2.0) · python -m mcp_server_time · 12 ms · approval: always". */
export function provenanceLine(r: unknown): string {
  if (!isRecord(r)) return "";
  const server = str(r.server);
  const version = str(r.version);
  const name = str(r.name) || server || "MCP server";
  const own = [server, version].filter((x) => x).join(" ");
  const who = server && name !== server ? `${name} (${own})` : [name, version].filter((x) => x).join(" ");
  const ms = typeof r.duration_ms === "number" ? duration(r.duration_ms) : "";
  const parts = [who, str(r.command) || str(r.url), ms, r.approval ? `approval: ${str(r.approval)}` : ""];
  return parts.filter((x) => x).join(" · ");
}

/** The provenance lines of a message: its own record (a result's), then its calls' (an assistant's), once each. */
export function mcpLines(msg: Partial<Message>): string[] {
  const records = [msg.mcp, ...(msg.content || []).filter((b) => b.type === "tool_call").map((b) => b.mcp)];
  return [...new Set(records.map(provenanceLine).filter((x) => x))];
}

/** What a reused result says ("" for a result that was not reused). */
export function reusedLine(msg: Partial<Message>): string {
  if (msg.reused === undefined) return "";
  return msg.reused ? `the stored result of entry ${short(msg.reused)} (tools reused: none ran)` : "no stored result to reuse (tools reused: none ran)";
}
