import { GraphQLError } from 'graphql';

/**
 * An expected, user-facing failure with a stable `code` (the contract's error vocabulary).
 * Resolvers turn it into a GraphQL error with `extensions.code`, `retryable` and `remediation`.
 */
export class StudioError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly remediation: string | null;
  readonly field: string | null;
  /** Further machine-readable detail (for example a refused batch's failing `items`). */
  readonly extensions: Record<string, unknown>;

  constructor(
    code: string,
    message: string,
    options: {
      retryable?: boolean;
      remediation?: string;
      field?: string;
      extensions?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = 'StudioError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.remediation = options.remediation ?? null;
    this.field = options.field ?? null;
    this.extensions = options.extensions ?? {};
  }

  toGraphQLError(): GraphQLError {
    return new GraphQLError(this.message, {
      extensions: {
        ...this.extensions,
        code: this.code,
        retryable: this.retryable,
        ...(this.remediation ? { remediation: this.remediation } : {}),
        ...(this.field ? { field: this.field } : {}),
      },
    });
  }
}
