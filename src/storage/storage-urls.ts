import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { UploadSigner } from './upload-signer';

/** The public addresses the storage hands out: signed upload URLs on {upload_url}, media URLs on {cdn_url}. */
@Injectable()
export class StorageUrls {
  constructor(
    private readonly signer: UploadSigner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  preallocatedUploadUrl(organizationId: string, mediaId: string, size: number, contentType: string, expiresAt: number): string {
    const signature = this.signer.sign({ mode: 'put', organizationId, mediaId, size, contentType, expiresAt });
    const query = new URLSearchParams({ size: String(size), contentType, expires: String(expiresAt), signature });
    return `${this.config.urls.uploadUrl}/${organizationId}/${mediaId}?${query}`;
  }

  nonAllocatedUploadUrl(organizationId: string, nonce: string, expiresAt: number): string {
    const signature = this.signer.sign({ mode: 'post', organizationId, nonce, expiresAt });
    const query = new URLSearchParams({ nonce, expires: String(expiresAt), signature });
    return `${this.config.urls.uploadUrl}/${organizationId}?${query}`;
  }

  mediaUrl(organizationId: string, mediaId: string): string {
    return `${this.config.urls.cdnUrl}/c/${organizationId}/${mediaId}`;
  }
}
