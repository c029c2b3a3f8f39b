export interface OrganizationCreated {
  type: 'OrganizationCreated';
  data: { organizationId: string; name: string; createdAt: string; createdBy: string; createdById: string };
}

export type OrganizationEvent = OrganizationCreated;

export const organizationStream = (organizationId: string): string => `organization-${organizationId}`;
