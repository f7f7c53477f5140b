/* SPDX-License-Identifier: MIT */
#ifndef GDRCHECK_PEER_H
#define GDRCHECK_PEER_H

/*
 * The two-node bootstrap channel (gdrcheck --listen / --peer): one TCP
 * connection, authenticated by a shared token the wire never carries
 * (HMAC over both sides' nonces), every read and write bounded by the
 * run's deadline. The listener serves one peer: a client that fails the
 * handshake is told why and dropped, and the listener waits on for the
 * right one until the deadline.
 *
 * Functions return 0 or -errno (-ETIMEDOUT: the deadline passed,
 * -EACCES: the token did not match, -EPROTO: the peer broke the
 * protocol, -ECONNRESET: it went away); c->err says what happened in
 * words an operator can act on.
 */
#include <stddef.h>
#include <stdint.h>

#include "access/peer_msg.h"

struct peer_conn {
	int fd;
	double deadline_ms;		/* now_ms() value; 0: none */
	char host[256];			/* the other side's hostname (HELLO) */
	char addr[128];			/* its address as seen here */
	char err[320];
};

/* "[ADDR:]PORT" / "HOST[:PORT]"; default port PEER_DEFAULT_PORT. */
#define PEER_DEFAULT_PORT 18515
int peer_parse_endpoint(const char *s, char *host, size_t host_len,
			char *port, size_t port_len);

int peer_listen(struct peer_conn *c, const char *endpoint, const char *token,
		const char *my_host);
int peer_connect(struct peer_conn *c, const char *endpoint, const char *token,
		 const char *my_host, const char *run_id);

int peer_send(struct peer_conn *c, uint16_t type, const struct peer_buf *b);
/* One message into payload (at least PEER_MAX_PAYLOAD bytes). */
int peer_recv(struct peer_conn *c, uint16_t *type, uint8_t *payload,
	      size_t *len);
void peer_close(struct peer_conn *c);

#endif
