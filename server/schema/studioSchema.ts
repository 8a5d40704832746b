/**
 * The contract's schema as the server builds it from schema.graphql.
 *
 * Every name in a GraphQL document is ASCII (the spec's `/[_A-Za-z][_0-9A-Za-z]*\/`), but the
 * lexer slices names out of the file's text, and a text with one character past Latin-1 in a
 * description (schema.graphql has "…") is a two-byte string in V8: every type and enum value name
 * sliced from it is two-byte too. Those names are what results carry (`__typename`, every enum
 * value), and a JSON.stringify that meets one two-byte string builds the whole text two-byte:
 * every response and subscription payload was then twice the memory, and its byte length and
 * UTF-8 encoding took the slow path: on the HTTP history path, sizing and encoding each page
 * (sharedPayloads.ts, `utf8`) took 5.5 µs per event, 3.2 µs with one-byte names (2 x 30,000
 * events each way, one process per build, on the 2-core machine). So each name is
 * copied as Latin-1 (one byte per character, the same characters) before the schema is built.
 * V8 interns a name once and keeps the string it met first, so a two-byte parse of the same
 * names earlier in the process (test/server/studioSchema.test.ts shows it) would win.
 */
import { Kind, parse, visit } from 'graphql';
import type { DocumentNode, NameNode } from 'graphql';

/** A one-byte copy of an ASCII string (a GraphQL name): the same characters. */
export function oneByte(text: string): string {
  return Buffer.from(text, 'latin1').toString('latin1');
}

/**
 * An SDL text (schema.graphql's, which the caller reads: the file's path is relative to the
 * server's entry, server/http.ts, as bundled into dist-server/) parsed, each name one-byte.
 */
export function studioTypeDefs(text: string): DocumentNode {
  const document = parse(text, { noLocation: true });
  return visit(document, {
    [Kind.NAME]: (node: NameNode): NameNode => ({ ...node, value: oneByte(node.value) }),
  });
}
