import protocol from '../shared-schema/protocol.json' with { type: 'json' };

export type ErrorCode = keyof typeof protocol.errorCodes;

/** An error the client can act on: it carries one of the protocol's error codes. */
export class AutoRigError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'AutoRigError';
    this.code = code;
  }
}
