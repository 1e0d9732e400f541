import { Controller, Get, Query } from '@nestjs/common';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { queryParametersOf, unknownQueryMessage } from './query-parameters';

class PageQuery {
  @IsOptional() @IsInt() page?: number;
}

class SearchQuery extends PageQuery {
  @IsOptional() @IsString() search?: string;
}

@Controller('things')
class ThingsController {
  @Get() list(@Query() query: SearchQuery): SearchQuery {
    return query;
  }

  @Get('one') one(@Query('token') token?: string, @Query('cursor') cursor?: string): string {
    return `${token}${cursor}`;
  }

  @Get('loose') loose(@Query() query: Record<string, string>): Record<string, string> {
    return query;
  }

  @Get('none') none(): void {}
}

describe('the query parameters a route takes', () => {
  it.each([
    ['a DTO, with the fields it inherits', 'list', ['search', 'page']],
    ['named @Query() arguments', 'one', ['token', 'cursor']],
    ['a whole query that is no DTO: none, so that the route must say what it reads', 'loose', []],
    ['no @Query() at all', 'none', []],
  ])('reads %s', (_case, handler, names) => {
    expect([...queryParametersOf(ThingsController, handler)].sort()).toEqual([...names].sort());
  });

  it('names the unknown ones, quoted, at most five, and what the route takes', () => {
    expect(unknownQueryMessage(['dryRun'], new Set())).toBe('Unknown query parameter "dryRun": this operation takes no query parameters');
    expect(unknownQueryMessage(['a', 'b"c'], new Set(['page', 'limit']))).toBe(
      'Unknown query parameters "a", "b\\"c": this operation takes only page, limit',
    );
    expect(unknownQueryMessage(['x'.repeat(100), '1', '2', '3', '4', '5', '6'], new Set())).toBe(
      `Unknown query parameters "${'x'.repeat(64)}…", "1", "2", "3", "4" and 2 more: this operation takes no query parameters`,
    );
  });
});
