/**
 * Tell the kernel that this page saves its session widgets' whole fallback (durable_nb/notebook/page.py).
 *
 * At `%load_ext durable_nb` the kernel opens a comm of target PAGE_TARGET towards its front ends (a
 * question); a notebook page with this extension answers by opening a comm of the same target with
 * `{fallback: "at-save"}`, because it writes each widget's whole fallback into its output as the
 * notebook is saved (./output.ts). From then on the kernel's displays carry a short fallback (a faster
 * first paint); a front end that does not answer (nbconvert, papermill, other front ends) keeps getting
 * the whole one. The target is registered on the notebook's kernel connection, which a kernel restart
 * keeps (the restarted kernel asks again at its `%load_ext`).
 */
import type { Kernel } from '@jupyterlab/services';

export const PAGE_TARGET = 'durable_nb.page';
export const AT_SAVE = 'at-save';

const answering = new WeakSet<Kernel.IKernelConnection>();

/** Answer the kernel's question on `kernel` (once per connection). */
export function answerKernel(kernel: Kernel.IKernelConnection | null | undefined): void {
  if (!kernel || answering.has(kernel)) return;
  answering.add(kernel);
  kernel.registerCommTarget(PAGE_TARGET, () => {
    if (kernel.isDisposed) return;
    kernel.createComm(PAGE_TARGET).open({ fallback: AT_SAVE });
  });
}
