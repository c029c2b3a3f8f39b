/** The organization and user that system keys created at start belong to. */
export const SYSTEM_ORGANIZATION_ID = '00000000-0000-4000-8000-000000000000';
export const SYSTEM_ORGANIZATION_NAME = 'system';
export const SYSTEM_USER_ID = '00000000-0000-4000-8000-000000000001';
export const SYSTEM_USER_NAME = 'system';
