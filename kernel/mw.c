// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (IBA 10.6.7): type 1, bound by ibv_bind_mw() for every QP
 * of its PD, and type 2B, bound by a work request for the QP that posted
 * it, until a local or remote invalidation.  A window is a key's object as
 * an MR is (struct softrma_mr with mw_type set): bound, it covers a range
 * of an MR of its PD with that MR's pages, so that every access (copies,
 * atomics, FLUSH) and every check of a key treat both alike.  Binding,
 * invalidating and deallocating a window hold its bind_lock; an MR that
 * windows are bound to cannot be deregistered.
 */

#include "verbs.h"

/* What a bind may ask for; a window's rights are remote ones. */
#define SOFTRMA_MW_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ZERO_BASED)

int softrma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct softrma_mr *win;
	int err;

	win = kzalloc(sizeof(*win), softrma_gfp(true));
	if (!win)
		return -ENOMEM;
	win->ibmr.device = ibmw->device;
	win->ibmr.pd = ibmw->pd;
	win->mw_type = ibmw->type;
	mutex_init(&win->bind_lock);
	softrma_users_init(&win->users);
	refcount_set(&win->ref, 1);
	err = softrma_mr_assign_key(to_sdev(ibmw->device), win, SOFTRMA_OBJ_MW);
	if (err) {
		kfree(win);
		return err;
	}
	ibmw->rkey = win->key;
	to_smw(ibmw)->win = win;
	return 0;
}

/*
 * Makes @win invalid and waits for the accesses in progress; then it lets
 * go of its MR.
 */
static void softrma_mw_unbind(struct softrma_dev *sdev, struct softrma_mr *win)
{
	struct softrma_mr *mr = win->parent;

	lockdep_assert_held(&win->bind_lock);
	xa_lock_bh(&sdev->mr_xa);
	WRITE_ONCE(win->valid, false);
	xa_unlock_bh(&sdev->mr_xa);
	if (!mr)
		return;
	softrma_mr_wait_users(win);
	win->parent = NULL;
	atomic_dec(&mr->windows);
	softrma_mr_unref(mr);
}

int softrma_dealloc_mw(struct ib_mw *ibmw)
{
	struct softrma_dev *sdev = to_sdev(ibmw->device);
	struct softrma_mr *win = to_smw(ibmw)->win;

	mutex_lock(&win->bind_lock);
	xa_erase_bh(&sdev->mr_xa, win->key >> 8);
	softrma_mw_unbind(sdev, win);
	mutex_unlock(&win->bind_lock);
	softrma_obj_del(sdev, SOFTRMA_OBJ_MW);
	softrma_users_drain(&win->users);
	softrma_mr_unref(win);
	return 0;
}

/*
 * The window whose index @key has, referenced, whatever its state: a bind
 * names its window by the index, so that a consumer that kept the key it
 * was allocated with (as ibv_post_send()'s users do) binds it again.
 */
static struct softrma_mr *softrma_mw_lookup(struct softrma_dev *sdev, u32 key)
{
	struct softrma_mr *win;

	xa_lock_bh(&sdev->mr_xa);
	win = xa_load(&sdev->mr_xa, key >> 8);
	if (win && win->mw_type)
		refcount_inc(&win->ref);
	else
		win = NULL;
	xa_unlock_bh(&sdev->mr_xa);
	return win;
}

/* Whether @win is still allocated. */
static bool softrma_mw_allocated(struct softrma_dev *sdev,
				 struct softrma_mr *win)
{
	lockdep_assert_held(&win->bind_lock);
	return xa_load(&sdev->mr_xa, win->key >> 8) == win;
}

/*
 * A type 1 window binds again and again (length 0 unbinds it) but never
 * zero-based (o10-36.2.2); a type 2B window binds to a range once until it
 * is invalidated (o10-37.2.30, o10-37.2.40), and only through a QP of its
 * PD (C10-72).
 */
static bool softrma_mw_may_bind(const struct softrma_mr *win,
				const struct ib_qp *qp, int access, u64 length)
{
	if (win->ibmr.pd != qp->pd)
		return false;
	if (win->mw_type == IB_MW_TYPE_1)
		return !(access & IB_ZERO_BASED);
	return !win->valid && length;
}

/*
 * The MR a window binds to: a user MR of the window's PD that allows
 * binding (C10-73), covers the range, and is locally writable if the window
 * lets remote peers write (C10-74); not an ODP one, whose pages a window
 * could not lend.  It is counted as bound to while it is
 * still registered and valid, in the locked section in which a rereg or a
 * deregistration looks for windows (the MR is in use meanwhile, so a rereg
 * that made it invalid waits): from then on neither changes its range or
 * pages until the window lets go.
 */
static struct softrma_mr *softrma_mw_hold_mr(struct softrma_dev *sdev,
					     const struct softrma_mr *win,
					     const struct softrma_sqe *sqe)
{
	int access = sqe->wr.bind.access;
	struct softrma_mr *mr, *held = NULL;

	mr = softrma_mr_get(sdev, win->ibmr.pd, sqe->wr.bind.mr_lkey,
			    sqe->wr.bind.addr, sqe->wr.bind.length,
			    IB_ACCESS_MW_BIND);
	if (IS_ERR_OR_NULL(mr))
		return NULL;
	if (mr->umem && !softrma_mr_is_odp(mr) &&
	    (!(access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) ||
	     (mr->access & IB_ACCESS_LOCAL_WRITE))) {
		xa_lock_bh(&sdev->mr_xa);
		if (xa_load(&sdev->mr_xa, mr->key >> 8) == mr && mr->valid) {
			atomic_inc(&mr->windows);
			refcount_inc(&mr->ref);
			held = mr;
		}
		xa_unlock_bh(&sdev->mr_xa);
	}
	softrma_mr_put(mr);
	return held;
}

/*
 * Binds @win, invalid, to @mr (NULL: it stays unbound) under the new key:
 * zero-based, the window's addresses count from its start.
 */
static void softrma_mw_set(struct softrma_dev *sdev, struct softrma_mr *win,
			   struct softrma_mr *mr, const struct softrma_sqe *sqe,
			   u64 qp_serial)
{
	u64 addr = sqe->wr.bind.addr, pos;

	xa_lock_bh(&sdev->mr_xa);
	WRITE_ONCE(win->key, sqe->wr.bind.new_key);
	if (mr) {
		pos = softrma_mr_pos(mr, addr);
		win->parent = mr;
		win->pages = mr->pages + (pos >> PAGE_SHIFT);
		win->page_offset = offset_in_page(pos);
		win->iova = sqe->wr.bind.access & IB_ZERO_BASED ? 0 : addr;
		win->length = sqe->wr.bind.length;
		win->access = sqe->wr.bind.access;
		win->qp_serial = qp_serial;
		softrma_mr_publish(win);
	}
	xa_unlock_bh(&sdev->mr_xa);
}

/**
 * softrma_mw_bind() - Executes an IB_WR_BIND_MW.
 * @qp: the QP it was posted to
 * @sqe: the kernel copy of its entry
 *
 * The window whose index @sqe names is bound, under the new key, to the range of the MR, or unbound (type 1, length 0);
 * a type 1 window bound before is unbound first, and the accesses through
 * it in progress are done by then.
 *
 * Context: Process context; sleeps.
 * Return: 0, or -EINVAL when a check of IBA 10.6.7 fails.
 */
int softrma_mw_bind(struct ib_qp *qp, const struct softrma_sqe *sqe)
{
	struct softrma_dev *sdev = to_sdev(qp->device);
	u32 key = sqe->wr.bind.mw_key;
	struct softrma_mr *win, *mr = NULL;
	int err = -EINVAL;

	if (sqe->wr.bind.new_key >> 8 != key >> 8 ||
	    (sqe->wr.bind.access & ~SOFTRMA_MW_ACCESS))
		return -EINVAL;
	win = softrma_mw_lookup(sdev, key);
	if (!win)
		return -EINVAL;
	mutex_lock(&win->bind_lock);
	if (!softrma_mw_allocated(sdev, win) ||
	    !softrma_mw_may_bind(win, qp, sqe->wr.bind.access,
				 sqe->wr.bind.length))
		goto out;
	if (sqe->wr.bind.length) {
		mr = softrma_mw_hold_mr(sdev, win, sqe);
		if (!mr)
			goto out;
	}
	softrma_mw_unbind(sdev, win);
	softrma_mw_set(sdev, win, mr, sqe, to_sqp(qp)->serial);
	err = 0;
out:
	mutex_unlock(&win->bind_lock);
	softrma_mr_unref(win);
	return err;
}

/**
 * softrma_mw_invalidate() - Invalidates a type 2B window.
 * @qp: the invalidating QP: the one the window is bound through
 * @win: the window, referenced by the caller
 * @key: the key it has
 *
 * Context: Process context; sleeps until the accesses in progress are done.
 * Return: 0, or -EINVAL when @win is a type 1 window, not bound, bound
 * through another QP, or under another key.
 */
int softrma_mw_invalidate(struct ib_qp *qp, struct softrma_mr *win, u32 key)
{
	struct softrma_dev *sdev = to_sdev(qp->device);
	int err = -EINVAL;

	mutex_lock(&win->bind_lock);
	if (win->mw_type == IB_MW_TYPE_2 && win->valid &&
	    win->qp_serial == to_sqp(qp)->serial && win->key == key &&
	    softrma_mw_allocated(sdev, win)) {
		softrma_mw_unbind(sdev, win);
		err = 0;
	}
	mutex_unlock(&win->bind_lock);
	return err;
}
