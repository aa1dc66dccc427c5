// markdown-it's linkify-it, left out of the bundle: markdown.ts turns linkify off (as render.py does),
// so no rule calls it; markdown-it only constructs one.
export class LinkifyIt {
  pretest() { return false; }
  test() { return false; }
  match() { return null; }
  matchAtStart() { return null; }
}
