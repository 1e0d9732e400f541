export { wholeNumber } from '../../common/dto/query-transforms';
