// Bundle the widget (anywidget's ES module) and the exported page's script into durable_nb/static/,
// and copy the stylesheet there. `node build.mjs` (npm run build); ./dev build runs it.
import { build, transform } from "esbuild";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "durable_nb", "static");
await mkdir(out, { recursive: true });
// markdown-it (markdown.ts) goes in without linkify-it, which markdown.ts never uses, and minified first (the
// widget's code is part of its first paint; the bundle below prints it again, ~110 KB): into build/
// (git-ignored), then aliased.
const vendor = join(here, "build", "markdown-it.mjs");
await build({
  stdin: { contents: 'export { default } from "markdown-it";', resolveDir: here },
  outfile: vendor,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  logLevel: "warning",
  alias: { "linkify-it": join(here, "vendor", "no-linkify.mjs") },
});
const common = {
  outdir: out,
  bundle: true,
  alias: { "markdown-it": vendor },
  format: "esm",
  target: "es2020",
  charset: "utf8",
  legalComments: "none",
  logLevel: "warning",
  banner: { js: "// generated from js/widget/src by esbuild (./dev build): edit the TypeScript, not this file" },
};
await build({
  ...common,
  // the session browser (%durable sessions) is a bundle of its own: the session widget's stays as small
  entryPoints: { widget: join(here, "src", "index.ts"), browser: join(here, "src", "browser", "index.ts") },
  // whitespace and syntax only (names kept: readable in a browser's debugger): ~30% fewer bytes in
  // every widget's first message (anywidget sends the module and the stylesheet in its state)
  minifyWhitespace: true,
  minifySyntax: true,
});
// the exported page's script, as written (a page is read, and kept, by people)
await build({ ...common, entryPoints: { export: join(here, "src", "export.ts") } });
for (const [src, name] of [[join(here, "src", "widget.css"), "widget.css"], [join(here, "src", "browser", "browser.css"), "browser.css"]]) {
  const css = await transform(await readFile(src, "utf8"), { loader: "css", minifyWhitespace: true, minifySyntax: true, logLevel: "warning" });
  await writeFile(join(out, name), css.code);
}

// markdown-it's HTML-block rules spell `<!--` in regexes and strings: `<\!--` reads the same there, and the
// exported page can then inline the bundle in a <script> (share/page.py refuses `<!--`, `</script`, `</style`).
for (const name of ["widget.js", "export.js"]) {
  const file = join(out, name);
  const text = await readFile(file, "utf8");
  await writeFile(file, text.replaceAll("<!--", "<\\!--").replace(/<\/(script|style)/gi, "<\\/$1"));
}
// anywidget loads the module's default export; esbuild writes it as `export { x as default }`: say it plainly.
for (const name of ["widget.js", "browser.js"]) {
  const file = join(out, name);
  const text = await readFile(file, "utf8");
  const plain = text.replace(/export\s*\{\s*(\w+) as default\s*\};?\s*$/, "\nexport default $1;\n");
  if (plain === text) throw new Error(`build.mjs: ${name} has no single default export to write plainly`);
  await writeFile(file, plain);
}
