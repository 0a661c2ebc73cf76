import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { ApiError } from '../../kernel/errors.ts';

export interface JsonBodyOptions {
  limitBytes: number;
}

/** Parses a JSON body: 415 unless it is JSON, 413 past the limit, 400 when it does not parse. */
export function jsonBody({ limitBytes }: JsonBodyOptions): Array<RequestHandler | ErrorRequestHandler> {
  const requireJson: RequestHandler = (req, _res, next) => {
    const declared = Number(req.get('content-length') ?? '0');
    if (declared > limitBytes) {
      next(new ApiError('payload_too_large', `The request body may be at most ${limitBytes} bytes.`));
      return;
    }
    const hasBody = declared > 0 || req.get('transfer-encoding') !== undefined;
    if (hasBody && !req.is('application/json')) {
      next(new ApiError('unsupported_media_type', 'Send the body as application/json.'));
      return;
    }
    next();
  };
  const parse = express.json({ limit: limitBytes, strict: true });
  const translate: ErrorRequestHandler = (error: { type?: string }, _req, _res, next) => {
    if (error.type === 'entity.too.large') next(new ApiError('payload_too_large', `The request body may be at most ${limitBytes} bytes.`));
    else if (error.type === 'entity.parse.failed') next(new ApiError('invalid_request', 'The body is not valid JSON.'));
    else if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported')
      next(new ApiError('unsupported_media_type', 'Send the body as UTF-8 JSON.'));
    else if (error.type === 'request.aborted') next(new ApiError('invalid_request', 'The request body was cut off.'));
    else next(error);
  };
  return [requireJson, parse, translate];
}
