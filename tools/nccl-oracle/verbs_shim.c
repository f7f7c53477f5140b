/*
 * libibverbs.so for the oracle: the few verbs NCCL's ibvsymbols.cc insists
 * on loading that the project's verbs double (libibverbs.so.1, our
 * DT_NEEDED) does not export.  None is called while NCCL builds its
 * topology (they serve connections and async events); each fails safely.
 */
#include <errno.h>
#include <stddef.h>

struct ibv_context;
struct ibv_async_event;
struct ibv_qp;

int ibv_get_async_event(struct ibv_context *c, struct ibv_async_event *e) { (void)c; (void)e; errno = ENOSYS; return -1; }
void ibv_ack_async_event(struct ibv_async_event *e) { (void)e; }
int ibv_query_qp(struct ibv_qp *qp, void *attr, int mask, void *init) { (void)qp; (void)attr; (void)mask; (void)init; return ENOSYS; }
int ibv_fork_init(void) { return 0; }
const char *ibv_event_type_str(int t) { (void)t; return "unknown"; }
int ibv_query_ece(struct ibv_qp *qp, void *ece) { (void)qp; (void)ece; return EOPNOTSUPP; }
int ibv_set_ece(struct ibv_qp *qp, void *ece) { (void)qp; (void)ece; return EOPNOTSUPP; }
