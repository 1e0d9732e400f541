import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export enum WebhooksErrorCode {
  WEBHOOK_NOT_FOUND = 'WEBHOOK_NOT_FOUND',
  WEBHOOK_DELIVERY_NOT_FOUND = 'WEBHOOK_DELIVERY_NOT_FOUND',
  WEBHOOK_LIMIT = 'WEBHOOK_LIMIT',
  WEBHOOK_DISABLED = 'WEBHOOK_DISABLED',
  VALIDATION_ERROR = 'VALIDATION_ERROR',
}

export const WebhooksErrors = {
  /** A URL the safety rules refuse: the message names the field (`url …`). */
  invalid: (message: string) => new DomainError(HttpStatus.BAD_REQUEST, WebhooksErrorCode.VALIDATION_ERROR, message),
  notFound: (id: string) =>
    new DomainError(HttpStatus.NOT_FOUND, WebhooksErrorCode.WEBHOOK_NOT_FOUND, `Webhook endpoint ${id} not found in this organization`),
  deliveryNotFound: (eventId: string) =>
    new DomainError(
      HttpStatus.NOT_FOUND,
      WebhooksErrorCode.WEBHOOK_DELIVERY_NOT_FOUND,
      `No delivery of event ${eventId} to this endpoint in the last 7 days`,
    ),
  limit: (max: number) =>
    new DomainError(HttpStatus.CONFLICT, WebhooksErrorCode.WEBHOOK_LIMIT, `An organization has at most ${max} webhook endpoints; delete one first`),
  disabled: (what: string) =>
    new DomainError(
      HttpStatus.CONFLICT,
      WebhooksErrorCode.WEBHOOK_DISABLED,
      `The endpoint is disabled: enable it (PATCH {enabled: true}) to ${what}`,
    ),
};
