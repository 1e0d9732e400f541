import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { Allowance, allowanceReachedMessage, lockedMessage } from '../quota/allowance';

export enum FlagsErrorCode {
  FLAG_NOT_FOUND = 'FLAG_NOT_FOUND',
  FLAG_KEY_TAKEN = 'FLAG_KEY_TAKEN',
  ALLOWANCE_REACHED = 'ALLOWANCE_REACHED',
  FLAG_LOCKED = 'FLAG_LOCKED',
  FLAG_CHANGED = 'FLAG_CHANGED',
  ARCHIVED_FLAG_VALUE = 'ARCHIVED_FLAG_VALUE',
  SCHEDULE_NOT_FOUND = 'SCHEDULE_NOT_FOUND',
  TOO_MANY_SCHEDULES = 'TOO_MANY_SCHEDULES',
  AUDIT_ENTRY_NOT_RESTORABLE = 'AUDIT_ENTRY_NOT_RESTORABLE',
  IMPORT_REFUSED = 'IMPORT_REFUSED',
  VALIDATION_ERROR = 'VALIDATION_ERROR',
}

export const FlagsErrors = {
  /** A body rule that needs the stored flag to check (rules against the flag's type): the 400 a DTO rule would give. */
  invalid: (message: string) => new DomainError(HttpStatus.BAD_REQUEST, FlagsErrorCode.VALIDATION_ERROR, message),
  notFound: (flagId: string) => new DomainError(HttpStatus.NOT_FOUND, FlagsErrorCode.FLAG_NOT_FOUND, `Flag ${flagId} not found in this organization`),
  keyTaken: (key: string) =>
    new DomainError(
      HttpStatus.CONFLICT,
      FlagsErrorCode.FLAG_KEY_TAKEN,
      `A flag with key "${key}" already exists in this organization (archived flags keep their key reserved)`,
    ),
  /** At the allowance that applies: a level's (a bare number is one), or the organization's own, which the message names. */
  allowanceReached: (allowance: Allowance | number) =>
    new DomainError(
      HttpStatus.CONFLICT,
      FlagsErrorCode.ALLOWANCE_REACHED,
      allowanceReachedMessage(typeof allowance === 'number' ? { max: allowance, source: 'free' } : allowance),
    ),
  /** Beyond the allowance: "subscribe again" under a level, the operator's limit under the organization's own. */
  locked: (key: string, allowance?: Allowance) =>
    new DomainError(HttpStatus.FORBIDDEN, FlagsErrorCode.FLAG_LOCKED, lockedMessage(key, allowance ?? { max: 0, source: 'free' })),
  /** If-Match named a version the flag is no longer at: someone changed it since the caller read it. */
  changed: (key: string, version: number) =>
    new DomainError(
      HttpStatus.PRECONDITION_FAILED,
      FlagsErrorCode.FLAG_CHANGED,
      `Flag "${key}" was changed since you read it (it is now at ETag "${version}", which If-Match did not name): ` +
        'nothing was written; read it again (GET /v1/flags/{flagId}) and apply your change to the latest',
    ),
  archivedValueChange: (key: string) =>
    new DomainError(
      HttpStatus.CONFLICT,
      FlagsErrorCode.ARCHIVED_FLAG_VALUE,
      `Flag "${key}" is archived: restore it (archived: false) before changing its value`,
    ),
  scheduleNotFound: (scheduleId: string) =>
    new DomainError(HttpStatus.NOT_FOUND, FlagsErrorCode.SCHEDULE_NOT_FOUND, `No pending schedule ${scheduleId} for this flag`),
  tooManySchedules: (max: number) =>
    new DomainError(
      HttpStatus.CONFLICT,
      FlagsErrorCode.TOO_MANY_SCHEDULES,
      `This flag already has ${max} pending schedules; cancel one or wait for one to apply`,
    ),
  /** A real import that the target refuses in part: nothing changed; the body carries the whole report. */
  importRefused: (report: { refused: unknown[] }) =>
    Object.assign(
      new DomainError(
        HttpStatus.CONFLICT,
        FlagsErrorCode.IMPORT_REFUSED,
        `This organization refuses ${report.refused.length} of the flags (see refused); nothing was imported`,
      ),
      { responseDetails: report },
    ),
  /** The same answer whether the entry is another flag's, another organization's, a deletion or none at all. */
  notRestorable: (auditEntryId: string) =>
    new DomainError(
      HttpStatus.BAD_REQUEST,
      FlagsErrorCode.AUDIT_ENTRY_NOT_RESTORABLE,
      `auditEntryId ${auditEntryId} is not an entry of this flag with an after state (a deletion has none)`,
    ),
};
