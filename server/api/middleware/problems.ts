import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, isStorageFailure, storageUnavailable } from '../../kernel/errors.ts';
import { redactPaths } from '../../kernel/redact.ts';
import '../request-context.ts';

/** 404 for every path no route matched. */
export function notFound(): RequestHandler {
  return (req, _res, next) => next(new ApiError('not_found', `There is no ${req.method} ${req.path}.`));
}

/** The one final handler: renders every error as RFC 9457 problem+json; unknown errors become a bare 500. */
export function problemHandler(log: (message: string, error: unknown) => void): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let problem: ApiError;
    if (error instanceof ApiError) {
      problem = error;
    } else if (isStorageFailure(error)) {
      log(`request ${req.requestId} could not write to disk`, error);
      problem = storageUnavailable(error);
    } else if (isHttpError(error) && error.status >= 400 && error.status < 500) {
      problem = new ApiError('invalid_request', 'The request could not be read.');
    } else {
      log(`request ${req.requestId} failed`, error);
      problem = new ApiError('internal', 'Something went wrong inside the appliance; the request id identifies it in the logs.');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
    res
      .status(problem.status)
      .type('application/problem+json')
      .send(JSON.stringify({ ...problem.toProblem(req.requestId ?? 'unknown'), detail: redactPaths(problem.message) }));
  };
}

function isHttpError(error: unknown): error is { status: number } {
  return typeof error === 'object' && error !== null && typeof (error as { status?: unknown }).status === 'number';
}
