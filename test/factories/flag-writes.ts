import type { AuditActor } from '../../src/audit/audit-entry';
import type { CreateFlagDto, UpdateFlagDto } from '../../src/flags/dto/flag-input.dto';
import { FlagWriter } from '../../src/flags/flag-writer';
import { FlagsService } from '../../src/flags/flags.service';
import type { ServiceTestContext } from '../support/service-module';

/**
 * Flag writes through the one audited write path, as `actor`, for the medium tier: each opens its transaction
 * in FlagWriter.write, as a route or the scheduler does. `context` is read at call time (it is made in beforeAll).
 */
export function flagWrites(context: () => ServiceTestContext, actor: AuditActor, defaults: Pick<CreateFlagDto, 'type' | 'value'>) {
  const writer = () => context().get(FlagWriter);
  const flags = () => context().get(FlagsService);
  return {
    create: (organizationId: string, dto: Partial<CreateFlagDto> & { key: string }) =>
      writer().write(actor, (tx) => flags().create(tx, organizationId, { name: dto.key, ...defaults, ...dto } as CreateFlagDto)),
    update: (organizationId: string, flagId: string, dto: UpdateFlagDto) =>
      writer().write(actor, (tx) => flags().update(tx, organizationId, flagId, dto)),
    remove: (organizationId: string, flagId: string) => writer().write(actor, (tx) => flags().delete(tx, organizationId, flagId)),
    restore: (organizationId: string, flagId: string, auditEntryId: string) =>
      writer().write(actor, (tx) => flags().restore(tx, organizationId, flagId, auditEntryId)),
  };
}
