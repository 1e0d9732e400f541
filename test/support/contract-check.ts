import { verifyContract } from './contract';

// Runs after every e2e and service test: the answers a test received must match the served OpenAPI document.
afterEach(() => verifyContract());
