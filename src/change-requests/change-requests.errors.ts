import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { RefusalCode } from './change-request-state';

export enum ChangeRequestsErrorCode {
  CHANGE_REQUEST_NOT_FOUND = 'CHANGE_REQUEST_NOT_FOUND',
  CHANGE_REQUEST_FORBIDDEN = 'CHANGE_REQUEST_FORBIDDEN',
  CHANGE_REQUEST_NOT_PENDING = 'CHANGE_REQUEST_NOT_PENDING',
  CHANGE_REQUEST_NOT_APPROVED = 'CHANGE_REQUEST_NOT_APPROVED',
  CHANGE_REQUEST_ALREADY_REVIEWED = 'CHANGE_REQUEST_ALREADY_REVIEWED',
  CHANGE_REQUEST_STALE = 'CHANGE_REQUEST_STALE',
  CHANGE_REQUEST_REFUSED = 'CHANGE_REQUEST_REFUSED',
  VALIDATION_ERROR = 'VALIDATION_ERROR',
}

const REFUSAL_STATUS: Record<RefusalCode, HttpStatus> = {
  CHANGE_REQUEST_FORBIDDEN: HttpStatus.FORBIDDEN,
  CHANGE_REQUEST_NOT_PENDING: HttpStatus.CONFLICT,
  CHANGE_REQUEST_NOT_APPROVED: HttpStatus.CONFLICT,
  CHANGE_REQUEST_ALREADY_REVIEWED: HttpStatus.CONFLICT,
};

export const ChangeRequestsErrors = {
  invalid: (message: string) => new DomainError(HttpStatus.BAD_REQUEST, ChangeRequestsErrorCode.VALIDATION_ERROR, message),
  notFound: (id: string) =>
    new DomainError(HttpStatus.NOT_FOUND, ChangeRequestsErrorCode.CHANGE_REQUEST_NOT_FOUND, `Change request ${id} not found in this organization`),
  /** What the state machine refused. */
  refused: (code: RefusalCode, reason: string) => new DomainError(REFUSAL_STATUS[code], code, reason),
  stale: (stale: unknown[]) =>
    Object.assign(
      new DomainError(
        HttpStatus.CONFLICT,
        ChangeRequestsErrorCode.CHANGE_REQUEST_STALE,
        `${stale.length} of the request's flags changed since it was made (see stale): nothing was written; edit the request (PATCH) to refresh it and have it reviewed again`,
      ),
      { responseDetails: { stale } },
    ),
  orgRefused: (report: { refused: unknown[] }) =>
    Object.assign(
      new DomainError(
        HttpStatus.CONFLICT,
        ChangeRequestsErrorCode.CHANGE_REQUEST_REFUSED,
        `This organization refuses ${report.refused.length} of the request's changes (see refused); nothing was written`,
      ),
      { responseDetails: report },
    ),
};
