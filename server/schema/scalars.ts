import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { isDecimalString } from '../../protocol/seq.ts';

function decimal(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && isDecimalString(value)) return value;
  throw new GraphQLError(
    `BigInt must be a non-negative decimal string, got ${JSON.stringify(String(value))}`,
    {
      extensions: { code: 'BAD_USER_INPUT' },
    },
  );
}

/** BigInt: always a decimal string on the wire, in both directions; strings on the server too. */
export const BigIntScalar = new GraphQLScalarType({
  name: 'BigInt',
  description: 'A signed 64-bit integer, always a base-10 decimal string on the wire.',
  serialize: decimal,
  parseValue: (value) => {
    if (typeof value !== 'string')
      throw new GraphQLError('BigInt input must be a decimal string (not a JSON number).', {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    return decimal(value);
  },
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT) return decimal(ast.value);
    throw new GraphQLError('BigInt literal must be a string or an integer.', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  },
});

const CANONICAL_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function isoString(value: unknown): string {
  // The store keeps times as toISOString() output: pass them through untouched (hot path).
  if (typeof value === 'string' && CANONICAL_ISO.test(value)) return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value)))
    return new Date(value).toISOString();
  throw new GraphQLError(
    `DateTime must be an ISO-8601 string, got ${JSON.stringify(String(value))}`,
    {
      extensions: { code: 'BAD_USER_INPUT' },
    },
  );
}

/** DateTime: an ISO-8601 UTC string. */
export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  description: 'An ISO-8601 UTC timestamp string.',
  serialize: isoString,
  parseValue: isoString,
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING) return isoString(ast.value);
    throw new GraphQLError('DateTime literal must be a string.', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  },
});
