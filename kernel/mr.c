// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: user pages pinned through the core's umem API (so that
 * RLIMIT_MEMLOCK and pinned-page accounting are the kernel's own), a page
 * array for constant-time access by offset, and keys.
 *
 * A key is an index into the device's MR xarray (upper 24 bits) and a random
 * byte.  Indices are allocated cyclically, so a deregistered key cannot match
 * again until its index comes round, and then with a fresh random byte.
 *
 * Kernel consumers' fast-registration MRs (alloc_mr) are given their pages
 * by ib_map_mr_sg() while invalid, and their range, rights and key byte by
 * an IB_WR_REG_MR; an IB_WR_LOCAL_INV or a SEND with invalidate makes them
 * invalid again once the accesses in progress are done.
 */

#include <linux/ioport.h>
#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "trace.h"
#include "view.h"

/* What reg_user_mr accepts; the rest is refused with EOPNOTSUPP. */
#define SOFTRMA_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING | \
				 IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB | \
				 SOFTRMA_ACCESS_FLUSH)

/* Fills @pages with the @npages pinned pages of @umem, in order. */
int softrma_umem_pages(struct ib_umem *umem, struct page **pages,
		       unsigned long npages)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i >= npages))
			return -EFAULT;
		pages[i++] = sg_page_iter_page(&iter);
	}
	return i == npages ? 0 : -EFAULT;
}

/* Pins [start, start + length) for @mr: its umem and its page array. */
static int softrma_mr_pin(struct softrma_mr *mr, struct ib_device *ibdev,
			  u64 start, u64 length, int access)
{
	mr->umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(mr->umem))
		return PTR_ERR(mr->umem);
	mr->page_offset = ib_umem_offset(mr->umem);
	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   softrma_gfp(true));
	if (!mr->pages)
		return -ENOMEM;
	return softrma_umem_pages(mr->umem, mr->pages, mr->npages);
}

/* Publishes @mr, an MR or a window (@obj), under a new key. */
int softrma_mr_assign_key(struct softrma_dev *sdev, struct softrma_mr *mr,
			  enum softrma_obj obj)
{
	u32 index;
	int err;

	err = softrma_obj_add(sdev, obj);
	if (err)
		return err;
	err = xa_alloc_cyclic_bh(&sdev->mr_xa, &index, mr,
				 XA_LIMIT(1, SOFTRMA_MR_INDEX_MAX),
				 &sdev->mr_next, GFP_KERNEL);
	if (err < 0) {
		softrma_obj_del(sdev, obj);
		return err == -EBUSY ? -ENOMEM : err;
	}
	mr->ibmr.lkey = index << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	return 0;
}

static void softrma_mr_unpin(struct softrma_mr *mr)
{
	if (mr->view)
		softrma_view_detach(mr);
	if (mr->persist)
		softrma_persist_detach(mr);
	kvfree(mr->pages);
	mr->pages = NULL;
	mr->npages = 0;
	if (IS_ERR(mr->umem))
		mr->umem = NULL;
	if (softrma_mr_is_odp(mr))
		softrma_odp_put(mr);
	else
		ib_umem_release(mr->umem);
	mr->umem = NULL;
}

static void softrma_mr_free(struct softrma_mr *mr)
{
	kvfree(mr->map_pages);
	if (!mr->mw_type)	/* a window's pages are its MR's */
		softrma_mr_unpin(mr);
	kfree(mr);
}

/*
 * FLUSH rights come in the provider's softrma_reg_mr_cmd: 6.1's core
 * refuses access bits it does not know.  6.12 may pass them directly.
 */
static int softrma_mr_cmd_access(struct ib_udata *udata, int *access)
{
	struct softrma_reg_mr_cmd cmd = {};

	if (!udata || !udata->inlen)
		return 0;
	if (ib_copy_from_udata(&cmd, udata, min(sizeof(cmd), udata->inlen)))
		return -EFAULT;
	if (cmd.reserved || (cmd.access & ~SOFTRMA_ACCESS_FLUSH))
		return -EOPNOTSUPP;
	*access |= cmd.access;
	return 0;
}

/* FLUSH to persistence needs memory that persists, as rdma_rxe requires. */
static bool softrma_mr_is_pmem(const struct softrma_mr *mr)
{
	for (unsigned long i = 0; i < mr->npages; i++)
		if (region_intersects(page_to_phys(mr->pages[i]), PAGE_SIZE,
				      IORESOURCE_MEM,
				      IORES_DESC_PERSISTENT_MEMORY) !=
		    REGION_INTERSECTS)
			return false;
	return true;
}

/* Implicit ODP is registered at iova 0 (as mlx5 requires). */
static int softrma_mr_check(u64 start, u64 length, u64 iova, int access)
{
	if (access & ~SOFTRMA_MR_ACCESS)
		return -EOPNOTSUPP;
	if ((access & IB_ACCESS_ON_DEMAND) &&
	    softrma_mr_range_is_implicit(start, length))
		return iova ? -EINVAL : 0;
	if (!length || length > SOFTRMA_MAX_MR_SIZE || iova + length < iova)
		return -EINVAL;
	return 0;
}

/* ODP has no pages to check for FLUSH to persistence either. */
static int softrma_mr_check_odp(const struct softrma_dev *sdev, int access)
{
	if ((access & IB_ACCESS_ON_DEMAND) &&
	    (!softrma_dev_takes_odp(sdev) ||
	     (access & SOFTRMA_ACCESS_FLUSH_PERSISTENT)))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * An MR over [start, start + length) at @iova, pinned and checked (FLUSH to
 * persistence needs persistent memory), seen by a checking device through
 * its own view, which bounds its size; over persistent memory, checked for
 * persistence when the device has a persistence domain.  Or on demand.
 */
static struct softrma_mr *softrma_mr_new(struct softrma_dev *sdev, u64 start,
					 u64 length, u64 iova, int access)
{
	struct softrma_mr *mr;
	bool pmem = false;
	int err;

	err = softrma_mr_check_odp(sdev, access);
	if (err)
		return ERR_PTR(err);
	if (sdev->noncoherent && length > SOFTRMA_VIEW_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (access & IB_ACCESS_ON_DEMAND)
		err = softrma_odp_get(mr, &sdev->ib_dev, start, length, access);
	else
		err = softrma_mr_pin(mr, &sdev->ib_dev, start, length, access);
	if (!err && ((access & SOFTRMA_ACCESS_FLUSH_PERSISTENT) ||
		     sdev->persistence))
		pmem = softrma_mr_is_pmem(mr);
	if (!err && (access & SOFTRMA_ACCESS_FLUSH_PERSISTENT) && !pmem)
		err = -EINVAL;
	if (!err && sdev->noncoherent)
		err = softrma_view_attach(sdev, mr);
	if (!err && sdev->persistence && pmem)
		err = softrma_persist_attach(sdev, mr);
	if (err) {
		softrma_mr_free(mr);
		return ERR_PTR(err);
	}
	mr->iova = iova;
	mr->length = length;
	return mr;
}

struct ib_mr *softrma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibpd->device);
	struct softrma_mr *mr;
	int err;

	err = softrma_mr_cmd_access(udata, &access) ?:
	      softrma_mr_check(start, length, iova, access);
	if (err)
		return ERR_PTR(err);
	down_read(&sdev->mode_sem);
	mr = softrma_mr_new(sdev, start, length, iova, access);
	if (IS_ERR(mr)) {
		up_read(&sdev->mode_sem);
		return ERR_CAST(mr);
	}
	mr->access = access;
	mr->valid = true;
	softrma_users_init(&mr->users);
	refcount_set(&mr->ref, 1);

	err = softrma_mr_assign_key(sdev, mr, SOFTRMA_OBJ_MR);
	if (!err)
		atomic_inc(&sdev->user_mrs);
	up_read(&sdev->mode_sem);
	if (err) {
		softrma_mr_free(mr);
		return ERR_PTR(err);
	}
	trace_softrma_mr_reg(sdev, mr);
	return &mr->ibmr;
}

/*
 * Whether @access needs pages pinned anew: the pin was taken without
 * FOLL_WRITE and @access lets the device write (ib_access_writable(), as
 * ib_umem_get() decides), FLUSH to persistence is new and must be checked
 * against the pages, or the MR goes to or from on-demand paging.
 */
static bool softrma_mr_needs_pin(const struct softrma_mr *mr, int access)
{
	return (ib_access_writable(access) && !mr->umem->writable) ||
	       (access & ~mr->access & SOFTRMA_ACCESS_FLUSH_PERSISTENT) ||
	       ((access ^ mr->access) & (IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB));
}

/*
 * ibv_rereg_mr(), in place: the MR keeps its keys, as on hardware.  It is
 * invalid while it changes, and the accesses in progress are done first;
 * the lists made before it changed never enter it again (gen).  Not while
 * windows are bound to it, as deregistration.  The new PD is set before the
 * MR is valid again, so that the old PD's QPs never reach the new memory;
 * the core sets it again once this returns.  The new pages are pinned
 * before the old ones go, unless that fails for want of memory (as at
 * RLIMIT_MEMLOCK): then they are pinned after, and a failure leaves the MR
 * invalid, as ibv_rereg_mr(3) allows.
 */
struct ib_mr *softrma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *pd, struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibmr->device);
	struct softrma_mr *mr = to_smr(ibmr), *trans = NULL;
	int err = 0;

	if (!mr->umem)
		return ERR_PTR(-EINVAL);
	if (flags & IB_MR_REREG_ACCESS)
		err = softrma_mr_cmd_access(udata, &access);
	else
		access = mr->access;
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	/* An implicit ODP MR's chunks are its own: only its PD changes. */
	if ((flags & (IB_MR_REREG_TRANS | IB_MR_REREG_ACCESS)) &&
	    ((access | mr->access) & IB_ACCESS_ON_DEMAND) &&
	    (softrma_mr_range_is_implicit(start, length) ||
	     softrma_mr_range_is_implicit(mr->umem->address, mr->length)))
		return ERR_PTR(-EOPNOTSUPP);
	err = err ?: softrma_mr_check(start, length, iova, access);
	if (err)
		return ERR_PTR(err);
	if ((flags & IB_MR_REREG_TRANS) || softrma_mr_needs_pin(mr, access)) {
		trans = softrma_mr_new(sdev, start, length, iova, access);
		if (IS_ERR(trans) && PTR_ERR(trans) != -ENOMEM)
			return ERR_CAST(trans);
	}

	xa_lock_bh(&sdev->mr_xa);
	if (atomic_read(&mr->windows)) {
		xa_unlock_bh(&sdev->mr_xa);
		err = -EBUSY;
		goto out;
	}
	WRITE_ONCE(mr->valid, false);
	xa_unlock_bh(&sdev->mr_xa);
	softrma_mr_wait_users(mr);

	if (trans)
		softrma_view_retire(mr);
	if (IS_ERR(trans)) {
		softrma_mr_unpin(mr);
		trans = softrma_mr_new(sdev, start, length, iova, access);
		if (IS_ERR(trans))
			return ERR_CAST(trans);
	}
	/* Under the lock: a power failure reads a valid MR's (persist.c). */
	xa_lock_bh(&sdev->mr_xa);
	if (trans) {
		swap(mr->umem, trans->umem);
		swap(mr->pages, trans->pages);
		swap(mr->view, trans->view);
		swap(mr->persist, trans->persist);
		swap(mr->npages, trans->npages);
		swap(mr->page_offset, trans->page_offset);
		mr->iova = iova;
		mr->length = length;
	}
	mr->access = access;
	if (flags & IB_MR_REREG_PD)
		WRITE_ONCE(mr->ibmr.pd, pd);
	softrma_mr_publish(mr);
	xa_unlock_bh(&sdev->mr_xa);
out:
	if (!IS_ERR_OR_NULL(trans))
		softrma_mr_free(trans);
	return err ? ERR_PTR(err) : NULL;
}

/*
 * The MR behind a PD's local_dma_lkey: kernel consumers' SGEs carry kernel
 * virtual addresses (softrma has no DMA device: ib_uses_virt_dma()).
 */
struct ib_mr *softrma_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct softrma_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->length = U64_MAX;
	mr->access = access;
	mr->valid = true;
	softrma_users_init(&mr->users);
	refcount_set(&mr->ref, 1);
	err = softrma_mr_assign_key(to_sdev(ibpd->device), mr,
				    SOFTRMA_OBJ_MR);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* What an IB_WR_REG_MR may grant; remote writes need local ones (IBA 10.6.3.1). */
#define SOFTRMA_FAST_REG_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_RELAXED_ORDERING)

struct ib_mr *softrma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct softrma_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SOFTRMA_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	mr->map_pages = kvcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages || !mr->map_pages) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->max_pages = max_num_sg;
	softrma_users_init(&mr->users);
	refcount_set(&mr->ref, 1);
	err = softrma_mr_assign_key(to_sdev(ibpd->device), mr,
				    SOFTRMA_OBJ_MR);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	softrma_mr_free(mr);
	return ERR_PTR(err);
}

/* A page of a kernel consumer's mapping: a kernel virtual address. */
static int softrma_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct softrma_mr *mr = to_smr(ibmr);
	void *va = (void *)(uintptr_t)addr;

	if (mr->map_npages == mr->max_pages || !virt_addr_valid(va))
		return -EINVAL;
	mr->map_pages[mr->map_npages++] = virt_to_page(va);
	return 0;
}

/*
 * The pages of the next registration.  Returns the number of @sg's entries
 * mapped, as ib_map_mr_sg() does.
 */
int softrma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset)
{
	struct softrma_mr *mr = to_smr(ibmr);
	int n;

	if (ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	mr->map_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, softrma_mr_set_page);
	/* Before ib_map_mr_sg_zbva() makes the iova 0. */
	mr->map_page_offset = offset_in_page(ibmr->iova);
	return n;
}

/**
 * softrma_mr_fast_reg() - Executes an IB_WR_REG_MR.
 * @sdev: the device
 * @pd: the requester's PD, which the MR must belong to
 * @key: the MR's new key: its index names the MR
 * @access: the rights it grants
 *
 * The MR, invalid, becomes valid over the pages, iova and length that the
 * last ib_map_mr_sg() gave it, under @key.
 *
 * Context: Any; takes the MR xarray's lock.
 * Return: 0, or -EINVAL when @key names no invalid fast-registration MR of
 * @pd, the rights are not what an MR may have, or the mapping is empty.
 */
int softrma_mr_fast_reg(struct softrma_dev *sdev, struct ib_pd *pd, u32 key,
			int access)
{
	struct softrma_mr *mr;
	int err = -EINVAL;
	u64 len;

	if ((access & ~SOFTRMA_FAST_REG_ACCESS) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	xa_lock_bh(&sdev->mr_xa);
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (!mr || !softrma_mr_is_fast_reg(mr) || mr->ibmr.pd != pd ||
	    mr->valid)
		goto out;
	len = mr->ibmr.length;
	if (!len ||
	    len > ((u64)mr->map_npages << PAGE_SHIFT) - mr->map_page_offset ||
	    mr->ibmr.iova + len < mr->ibmr.iova)
		goto out;
	/*
	 * Invalid, none begins; one still in progress (a consumer that did
	 * not wait for its invalidation) would find the new pages.
	 */
	smp_mb();	/* valid read before the users: softrma_mr_enter() */
	if (refcount_read(&mr->users.count) > 1)
		goto out;
	swap(mr->pages, mr->map_pages);
	mr->npages = mr->map_npages;
	mr->page_offset = mr->map_page_offset;
	mr->iova = mr->ibmr.iova;
	mr->length = len;
	mr->access = access;
	mr->key = key;
	softrma_mr_publish(mr);
	err = 0;
out:
	xa_unlock_bh(&sdev->mr_xa);
	return err;
}

/*
 * Waits for the accesses to @mr that began before it was made invalid
 * (under the MR xarray's lock); they find it invalid from then on.
 */
void softrma_mr_wait_users(struct softrma_mr *mr)
{
	might_sleep();
	smp_mb();	/* invalid before the users are read: softrma_mr_enter() */
	wait_var_event(&mr->users, refcount_read(&mr->users.count) <= 1);
}

/**
 * softrma_mr_invalidate() - Executes an IB_WR_LOCAL_INV or a remote one.
 * @qp: the invalidating QP, whose PD (an XRC TGT QP's: softrma_qp_resp_pd())
 *	must be the MR's or window's
 * @key: the key the MR or window has
 *
 * From the return on, no access through the last key begins, and the
 * accesses in progress are done.  A memory region of user pages, the DMA
 * MR and a type 1 window cannot be invalidated.
 *
 * Context: Process context; sleeps until the accesses in progress are done.
 * Return: 0, or -EINVAL when @key names no fast-registration MR of @qp's
 * PD or no type 2B window bound through @qp.
 */
int softrma_mr_invalidate(struct ib_qp *qp, u32 key)
{
	struct softrma_dev *sdev = to_sdev(qp->device);
	struct softrma_mr *mr;
	int err;

	xa_lock_bh(&sdev->mr_xa);
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (!mr || !(softrma_mr_is_fast_reg(mr) || mr->mw_type) ||
	    mr->ibmr.pd != softrma_qp_resp_pd(to_sqp(qp)) || mr->key != key) {
		xa_unlock_bh(&sdev->mr_xa);
		return -EINVAL;
	}
	refcount_inc(&mr->ref);
	if (mr->mw_type) {
		xa_unlock_bh(&sdev->mr_xa);
		err = softrma_mw_invalidate(qp, mr, key);
	} else {
		WRITE_ONCE(mr->valid, false);
		xa_unlock_bh(&sdev->mr_xa);
		softrma_mr_wait_users(mr);
		err = 0;
	}
	softrma_mr_unref(mr);
	return err;
}

/*
 * Makes @mr, changed while invalid, valid under a new generation: its
 * range, pages and rights are seen before it is (softrma_mr_enter()).
 */
void softrma_mr_publish(struct softrma_mr *mr)
{
	lockdep_assert_held(&to_sdev(mr->ibmr.device)->mr_xa.xa_lock);
	WRITE_ONCE(mr->gen, mr->gen + 1);
	smp_store_release(&mr->valid, true);
}

/*
 * Begins an access to @mr through a list made when @key named it in
 * generation @gen: false when it is deregistered, invalid, or has been
 * registered or bound again since.
 */
bool softrma_mr_enter(struct softrma_mr *mr, u32 key, u32 gen)
{
	if (!softrma_users_get(&mr->users))
		return false;
	smp_mb();	/* in use before valid is read: softrma_mr_wait_users() */
	if (smp_load_acquire(&mr->valid) && READ_ONCE(mr->key) == key &&
	    READ_ONCE(mr->gen) == gen)
		return true;
	softrma_mr_put(mr);
	return false;
}

/* Ends an access; an invalidation or a rereg may be waiting for it. */
void softrma_mr_put(struct softrma_mr *mr)
{
	softrma_users_put(&mr->users);
	smp_mb__after_atomic();
	wake_up_var(&mr->users);
}

static void softrma_mr_free_work(struct work_struct *work)
{
	softrma_mr_free(container_of(work, struct softrma_mr, free_work));
}

/*
 * Drops a reference to the object; the last one unpins and frees it, in a
 * work when the receive softirq lets go of the last list that named an MR
 * deregistered meanwhile (softrma_dealloc_driver() waits for it).
 */
void softrma_mr_unref(struct softrma_mr *mr)
{
	might_sleep_if(!in_softirq());
	if (!refcount_dec_and_test(&mr->ref))
		return;
	if (!in_softirq()) {
		softrma_mr_free(mr);
		return;
	}
	INIT_WORK(&mr->free_work, softrma_mr_free_work);
	queue_work(softrma_wq, &mr->free_work);
}

/*
 * Unpublishes the key and waits for the accesses in progress, which copy
 * at most one message on this CPU; after that nothing touches the memory.
 * Lists that still name the MR keep the object until they let go.  An MR
 * that windows are bound to stays (IBA 10.6.7.2.6, as rdma_rxe).
 */
int softrma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibmr->device);
	struct softrma_mr *mr = to_smr(ibmr);

	xa_lock_bh(&sdev->mr_xa);
	if (atomic_read(&mr->windows)) {
		xa_unlock_bh(&sdev->mr_xa);
		return -EBUSY;
	}
	__xa_erase(&sdev->mr_xa, ibmr->lkey >> 8);
	xa_unlock_bh(&sdev->mr_xa);
	trace_softrma_mr_dereg(sdev, mr);
	softrma_obj_del(sdev, SOFTRMA_OBJ_MR);
	softrma_users_drain(&mr->users);
	softrma_view_retire(mr);
	if (ibmr->type == IB_MR_TYPE_USER)
		atomic_dec(&sdev->user_mrs);
	softrma_mr_unref(mr);
	return 0;
}

/* The valid MR or window @key names, in use; NULL when there is none. */
static struct softrma_mr *softrma_mr_find(struct softrma_dev *sdev, u32 key)
{
	struct softrma_mr *mr;

	xa_lock_bh(&sdev->mr_xa);
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (mr && (mr->key != key || !mr->valid ||
		   !softrma_users_get(&mr->users)))
		mr = NULL;
	xa_unlock_bh(&sdev->mr_xa);
	return mr;
}

/* @mr, found, when @ok; ERR_PTR(-EACCES), out of use, when not. */
static struct softrma_mr *softrma_mr_admit(struct softrma_mr *mr, bool ok)
{
	if (!mr || ok)
		return mr;
	softrma_mr_put(mr);
	return ERR_PTR(-EACCES);
}

static bool softrma_mr_grants(const struct softrma_mr *mr, int access)
{
	return (mr->access & access) == access;
}

static bool softrma_mr_covers(const struct softrma_mr *mr, u64 iova, u64 len)
{
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/*
 * Whether @qp reaches @mr remotely: the PD of its responder, and a type 2B
 * window's QP.
 */
static bool softrma_mr_reachable(const struct softrma_mr *mr,
				 struct ib_qp *qp)
{
	return mr->ibmr.pd == softrma_qp_resp_pd(to_sqp(qp)) &&
	       (mr->mw_type != IB_MW_TYPE_2 ||
		mr->qp_serial == to_sqp(qp)->serial);
}

/**
 * softrma_mr_get() - The MR a local key names, checked.
 * @sdev: the device
 * @pd: the PD it must belong to
 * @key: an lkey: a window has none
 * @iova: the start of the access
 * @len: its length
 * @access: the rights it needs
 *
 * Context: Any; takes the MR xarray's lock.
 * Return: the MR, in use until softrma_mr_put(); NULL for a key that names
 * nothing valid; ERR_PTR(-EACCES) for any other failed check.
 */
struct softrma_mr *softrma_mr_get(struct softrma_dev *sdev, struct ib_pd *pd,
				  u32 key, u64 iova, u64 len, int access)
{
	struct softrma_mr *mr = softrma_mr_find(sdev, key);

	return softrma_mr_admit(mr, mr && !mr->mw_type && mr->ibmr.pd == pd &&
				    softrma_mr_grants(mr, access) &&
				    softrma_mr_covers(mr, iova, len));
}

/* As softrma_mr_get(), for an rkey (an MR's or a window's) and @qp. */
struct softrma_mr *softrma_mr_get_remote(struct ib_qp *qp, u32 key, u64 iova,
					 u64 len, int access)
{
	struct softrma_mr *mr = softrma_mr_find(to_sdev(qp->device), key);

	return softrma_mr_admit(mr, mr && softrma_mr_reachable(mr, qp) &&
				    softrma_mr_grants(mr, access) &&
				    softrma_mr_covers(mr, iova, len));
}

/* As softrma_mr_get_remote(), for the whole MR or window (FLUSH of an MR). */
struct softrma_mr *softrma_mr_get_whole(struct ib_qp *qp, u32 key, int access)
{
	struct softrma_mr *mr = softrma_mr_find(to_sdev(qp->device), key);

	return softrma_mr_admit(mr, mr && softrma_mr_reachable(mr, qp) &&
				    softrma_mr_grants(mr, access));
}

/* Serialises softrma's atomics with one another, as one HCA would. */
static DEFINE_SPINLOCK(softrma_atomic_lock);

/*
 * Executes a compare-and-swap or fetch-and-add on the 8 aligned bytes at
 * @iova of @mr (checked by the caller) and leaves the original value in
 * *@orig.  Returns 0, or -EACCES when an ODP MR's page cannot be faulted
 * in writable, or with @nofault (the receive path) -EAGAIN, having
 * executed nothing, when it is not there (struct softrma_odp_hold).
 */
int softrma_mr_atomic(struct softrma_mr *mr, u64 iova, bool cmp_swap,
		      u64 compare_add, u64 swap, u64 *orig, bool nofault)
{
	struct softrma_odp_hold hold = { .nofault = nofault };
	u64 len = sizeof(u64), *p;
	struct page *page;
	int err;

	err = softrma_odp_hold(&hold, mr, iova, len, NULL, 0, 0);
	if (err)
		return err;
	p = softrma_mr_map(mr, iova, &len, &page);
	if (page)
		softrma_mr_before_read(mr, iova, len, page);
	spin_lock_bh(&softrma_atomic_lock);
	*orig = READ_ONCE(*p);
	if (!cmp_swap || *orig == compare_add) {
		softrma_mr_before_write(mr, iova, len, p);
		WRITE_ONCE(*p, cmp_swap ? swap : *orig + compare_add);
	}
	spin_unlock_bh(&softrma_atomic_lock);
	if (page)
		softrma_mr_after_write(mr, iova, len, p, page);
	softrma_mr_unmap(p, page);
	softrma_odp_release(&hold);
	return 0;
}

/*
 * ATOMIC WRITE: stores the 8 aligned bytes at @iova of @mr (checked by the
 * caller) at once, after everything before it and never halfway through
 * another atomic.  Returns 0, or -EACCES or -EAGAIN as softrma_mr_atomic().
 */
int softrma_mr_atomic_write(struct softrma_mr *mr, u64 iova, u64 value,
			    bool nofault)
{
	struct softrma_odp_hold hold = { .nofault = nofault };
	u64 len = sizeof(u64), *p;
	struct page *page;
	int err;

	err = softrma_odp_hold(&hold, mr, iova, len, NULL, 0, 0);
	if (err)
		return err;
	p = softrma_mr_map(mr, iova, &len, &page);
	spin_lock_bh(&softrma_atomic_lock);
	softrma_mr_before_write(mr, iova, len, p);
	smp_store_release(p, value);
	spin_unlock_bh(&softrma_atomic_lock);
	if (page)
		softrma_mr_after_write(mr, iova, len, p, page);
	softrma_mr_unmap(p, page);
	softrma_odp_release(&hold);
	return 0;
}

/*
 * FLUSH to persistence: writes [iova, iova + len) of @mr (checked by the
 * caller) back from the CPU caches.  May sleep.
 */
void softrma_mr_writeback(struct softrma_mr *mr, u64 iova, u64 len)
{
	struct page *page;
	u64 n;
	void *p;

	for (; len; iova += n, len -= n) {
		n = len;
		p = softrma_mr_map(mr, iova, &n, &page);
		arch_wb_cache_pmem(p, n);
		softrma_mr_unmap(p, page);
		cond_resched();
	}
	wmb();	/* the write-backs are done before the FLUSH is answered */
}
