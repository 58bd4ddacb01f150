// The MCP Apps bridge check (host/gateway TestAppsBridge, run by
// scripts/conformance.sh's "apps" part): through the gateway at URL, a
// client of the TypeScript SDK lists the tools, reads each tool's UI
// resource URI as the ext-apps app bridge does (getToolUiResourceUri, which
// takes ui:// URIs only and throws on any other), and reads that resource.
//
//   node apps-bridge.mjs URL WANT
//
// WANT is a JSON object: tool name -> {"uri": the URI the bridge must read,
// "text": the text of its resource}. Exits 1 on any difference (a tool
// missing, its _meta.ui dropped (the bridge would fall back on the earlier
// "ui/resourceUri"), a URI not ui:// or not the one wanted, a
// read failing or reaching another server's resource), printing each.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";

const [url, wantJSON] = process.argv.slice(2);
if (!url || !wantJSON) {
  console.error("usage: node apps-bridge.mjs URL WANT");
  process.exit(2);
}
const want = JSON.parse(wantJSON);
const problems = [];

const client = new Client({ name: "apps-bridge-check", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
try {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const [name, w] of Object.entries(want)) {
    const tool = byName.get(name);
    if (!tool) {
      problems.push(`${name}: not listed (tools: ${[...byName.keys()].join(", ")})`);
      continue;
    }
    let uri;
    try {
      uri = getToolUiResourceUri(tool);
    } catch (e) {
      problems.push(`${name}: the bridge refuses its UI resource URI: ${e.message}`);
      continue;
    }
    if (uri !== w.uri) {
      problems.push(`${name}: the bridge reads UI resource URI ${JSON.stringify(uri)}, want ${JSON.stringify(w.uri)} (_meta ${JSON.stringify(tool._meta)})`);
      continue;
    }
    // (The bridge falls back on the earlier flat "ui/resourceUri": the
    // current key must be there too.)
    if (tool._meta?.ui?.resourceUri !== w.uri) {
      problems.push(`${name}: _meta.ui.resourceUri is ${JSON.stringify(tool._meta?.ui?.resourceUri)}, want ${JSON.stringify(w.uri)}`);
      continue;
    }
    try {
      const res = await client.readResource({ uri });
      const texts = res.contents.map((c) => c.text);
      if (texts.length !== 1 || texts[0] !== w.text) {
        problems.push(`${name}: resources/read ${uri} gave ${JSON.stringify(texts)}, want ${JSON.stringify(w.text)}`);
      }
    } catch (e) {
      problems.push(`${name}: resources/read ${uri}: ${e.message}`);
    }
  }
} finally {
  await client.close();
}
if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`apps bridge: ${Object.keys(want).length} tools' UI resources read as the bridge reads them`);
