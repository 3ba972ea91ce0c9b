/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vnet NIC firmware: what a NIC's own processor would run.
 *
 * It includes no kernel header.  The host that runs it (the driver's NIC
 * emulation, or the host-side unit tests) supplies vnet_fw_env.h with the
 * basic types and memory-ordering primitives, and a struct vnet_fw_ops with
 * the few "hardware" services the firmware needs.
 *
 * Everything inside a struct vnet_frame or a staging area is owned by user
 * space and is read exactly once per decision: a value the user could have
 * written is copied, checked and only then used.
 */
#ifndef _VNET_FW_H
#define _VNET_FW_H

#include "vnet_fw_env.h"
#include "linux/vnet.h"
#include "wire.h"

struct vnet_fw_ep;

/*
 * Bytes in contiguous pieces, read in order: a received packet as the link
 * holds it (a NIC's receive buffer, then its pages), or a part of one.  A
 * payload is summed and copied to where it goes straight from the pieces,
 * never gathered into one buffer first: one copy from the wire to the
 * endpoint.  @skip bytes of the first piece come before the first byte;
 * @one is the only piece of a contiguous buffer (vnet_fw_bytes_flat()).
 */
/*
 * The first piece of a packet holds this much of it, or all of a shorter
 * one, so that its header is contiguous; a MAPPER packet is one piece.
 */
#define VNET_FW_RX_HEAD		VNET_WIRE_FIRST_LEN

struct vnet_fw_piece {
	const u8 *data;
	u32 len;
};

struct vnet_fw_bytes {
	const struct vnet_fw_piece *piece;
	u32 npieces;
	u32 skip;
	u32 len;
	struct vnet_fw_piece one;
};

void vnet_fw_bytes_flat(struct vnet_fw_bytes *b, const void *data, u32 len);
void vnet_fw_bytes_sub(struct vnet_fw_bytes *out,
		       const struct vnet_fw_bytes *in, u32 off, u32 len);
u32 vnet_fw_bytes_crc(u32 crc, const struct vnet_fw_bytes *b);
void vnet_fw_bytes_copy(void *dst, const struct vnet_fw_bytes *b);

/*
 * Something an operator may want to see happen, for the host's tracing:
 * none of it is needed for the firmware to work, all of it is rare next
 * to messages delivered.
 */
enum vnet_fw_event_type {
	VNET_FW_EV_NACK_TX,		/* we refused a peer's DATA packet */
	VNET_FW_EV_NACK_RX,		/* a peer refused ours */
	VNET_FW_EV_RETRANSMIT,		/* a DATA packet sent again */
	VNET_FW_EV_RETURNED,		/* a message written back to its sender */
};

struct vnet_fw_event {
	u8 type;			/* enum vnet_fw_event_type */
	/* NACK: enum vnet_nack_reason; RETURNED: vnet_return_reason */
	u8 reason;
	u8 channel;			/* NACK, RETRANSMIT */
	bool resumed;			/* RETRANSMIT: on a RESUME, not a timer */
	u32 peer;			/* the other NIC's id */
	u32 seq;			/* NACK, RETRANSMIT */
	/* RETRANSMIT: transmissions since the last answer (a NACK) */
	u32 retries;
	struct vnet_name src;		/* RETURNED: its sender */
	struct vnet_name dst;		/* RETURNED: where it was going */
};

/*
 * Services the host provides.  All are called from the firmware context
 * (with the host's firmware lock held) and must not sleep, except pause.
 */
struct vnet_fw_ops {
	/* The local endpoint with this index, or NULL. */
	struct vnet_fw_ep *(*lookup)(void *ctx, u32 ep_index);
	/* Ask the host to bring a non-resident endpoint onto the card. */
	void (*request_fault)(void *ctx, struct vnet_fw_ep *ep);
	/* A receive queue of @ep went from empty to non-empty. */
	void (*notify_recv)(void *ctx, struct vnet_fw_ep *ep);
	/*
	 * Put a packet on the wire to peer slot @peer: @hdr_len bytes of
	 * header then @len of payload.  May drop it; the firmware retries.
	 */
	void (*transmit)(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
			 const void *payload, u32 len);
	/*
	 * Optional: as transmit, with the payload the @len bytes at @offset
	 * of @ep's source @src (VNET_FW_SRC_SEG, its segment, or one of its
	 * pins), which the host may send from the source's own pinned pages
	 * rather than copy (nic->zero_copy; without this op, trains are
	 * copied).  Their owner may
	 * write them while the packet is on its way: it then leaves with
	 * other bytes than it was summed over, and its receiver drops it.
	 */
	void (*transmit_seg)(void *ctx, u32 peer, const void *hdr,
			     u32 hdr_len, const struct vnet_fw_ep *ep,
			     int src, u64 offset, u32 len);
	/* Every message @ep has in flight is now resolved (flush rule). */
	void (*notify_flushed)(void *ctx, struct vnet_fw_ep *ep);
	/* 32 unpredictable bits: initial sequence numbers. */
	u32 (*random)(void *ctx);
	/*
	 * Optional, for a NIC with a mapper: put a packet on the wire to the
	 * Ethernet address @mac (the broadcast address: every NIC), and
	 * take a mapper datagram that came from @mac.
	 */
	void (*transmit_to)(void *ctx, const u8 *mac, const void *hdr,
			    u32 hdr_len, const void *payload, u32 len);
	void (*mapper_rx)(void *ctx, const u8 *mac, const void *payload,
			  u32 len);
	/*
	 * Optional: called in a round between two endpoints' turns.  The
	 * host may let other work run, and give its firmware lock to others
	 * meanwhile: the firmware holds nothing across it and reads every
	 * endpoint afresh after it.  Returns the time now.
	 */
	u64 (*pause)(void *ctx);
	/* Optional: something happened (struct vnet_fw_event). */
	void (*event)(void *ctx, const struct vnet_fw_event *ev);
};

struct vnet_fw_translation {
	struct vnet_name name;
	u64 tag;
	bool valid;
};

/*
 * What a reply must quote.  Tokens live outside user memory so a reply can
 * only go to an endpoint that really sent this endpoint a request, and only
 * once.
 */
struct vnet_fw_token {
	struct vnet_name peer;
	u64 tag;
	u64 key;			/* the requester's reply key */
	u32 serial;
	bool valid;
};

#define VNET_FW_TOKENS		(4 * VNET_QUEUE_DEPTH)

/* vnet_fw_ep.queue_errors: queues whose user-written index is impossible */
#define VNET_FW_BAD_INDEX(q)	(1u << (q))

struct vnet_fw_ep_stats {
	u64 sent;
	u64 received;
	u64 returned;
	u64 rejected;
};

/*
 * User memory besides the segment that XFERs may be read from in place: a
 * range its owner pinned (VNET_IOC_PIN).  The host sets base, addr and len
 * and bumps gen under fw_lock.  It sets stale without fw_lock, as soon as
 * the owner's mapping of the range changes: from then on nothing is read
 * from it that was not being read already, though its pages stay pinned
 * (and base readable) until the host clears it under fw_lock.
 */
struct vnet_fw_pin {
	const u8 *base;			/* NULL: none; read-only */
	u64 addr;			/* the owner's address of base[0] */
	u64 len;
	u32 gen;
	bool stale;
};

/* vnet_fw_send_chan.src_pin for a message read from the segment */
#define VNET_FW_SRC_SEG		(-1)

/* Descriptor flags: the payload is read in place, from user memory. */
#define VNET_FW_DESC_IN_PLACE	(VNET_DESC_FROM_SEG | VNET_DESC_FROM_PIN)

/*
 * Per-endpoint firmware state.  It stays in host memory while the endpoint
 * is paged, so the indices the firmware owns survive eviction and never come
 * from user-writable memory.
 */
struct vnet_fw_ep {
	/*
	 * Set by the host while the endpoint sits in a card frame, else NULL;
	 * released after the state it sets for the load, which the firmware
	 * reads after an acquire of this.
	 */
	struct vnet_frame *frame;
	u8 *staging;			/* VNET_STAGING_SIZE bytes */
	u8 *seg;			/* bulk transfers land here, or NULL */
	u64 seg_len;
	/*
	 * Bumped by the host whenever it changes seg or seg_len: a train
	 * begun in one segment must not go on in another of the same size.
	 */
	u32 seg_gen;
	struct vnet_fw_pin pins[VNET_NR_PINS];
	struct vnet_name name;
	u64 tag;
	/*
	 * What a reply to one of its requests must carry: random, set by the
	 * host, never in user memory.  Requests carry it on the wire, the
	 * replier's token keeps it, and only a reply that quotes it is
	 * delivered: a reply cannot be forged without having seen a request.
	 */
	u64 reply_key;
	struct vnet_fw_translation xlate[VNET_MAX_SLOTS];

	/*
	 * Send queues (VNET_Q_REQ_SEND, VNET_Q_REP_SEND): the next entry to
	 * take, and the consumer index the user sees, which passes an entry
	 * only once the firmware is done with it.  They differ while an entry
	 * is held by its train (train_held below).
	 */
	u32 send_taken[2];
	u32 send_cons[2];
	u32 recv_prod[2];		/* VNET_Q_REQ_RECV, VNET_Q_REP_RECV */
	u32 queue_errors;
	/*
	 * Send queues whose head waited on its destination at the last
	 * visit, a bit per queue: they are retried on the held timer, and
	 * are no reason to stay awake or to lower NEED_WAKEUP.
	 */
	u32 held;

	struct vnet_fw_token token[VNET_FW_TOKENS];
	u32 token_serial;

	/*
	 * nic->now when the firmware last moved a message from or into it,
	 * or found its head waiting on a destination: the host's residency
	 * policy tells a busy endpoint from an idle one by it.
	 */
	u64 active_at;
	/*
	 * The endpoint of this NIC it last sent a message to or had one
	 * from, its index plus one (0: none yet), delivered or held: the
	 * host keeps the two in their frames together (residency.h).
	 */
	u32 partner;
	/*
	 * Since it was loaded, a message was delivered into it, or it sent
	 * one to an endpoint of this NIC or a reply across the wire: what it
	 * was loaded for has happened.  (A request it sent across the wire
	 * has not: its reply is still to come.)  Cleared by the host on
	 * every load.
	 */
	bool served;
	/*
	 * nic->now when it was served first since its load, published
	 * before served: how long a load takes to pay off (residency.h).
	 */
	u64 served_at;
	/*
	 * Set by the host while it evicts the endpoint: nothing is delivered
	 * into it and its NACKed messages are not retransmitted, so its
	 * unresolved count can reach zero.
	 */
	bool moving;
	/*
	 * Set by vnet_fw_ep_forget() when the endpoint closes: nothing is
	 * sent from it again, and its messages still on the wire no longer
	 * count for it.
	 */
	bool closed;
	/* Messages on the wire with no ACK nor latest NACK yet. */
	u32 unresolved;
	/* Pool buffers its messages hold, at most vnet_fw_pool_share(). */
	u32 pool_held;
	/*
	 * Peer slots, modulo 64, that were NACKed "not resident" for it:
	 * they get a RESUME once it is back on the card (resume.c).
	 */
	u64 resume_peers;
	/*
	 * Entries of its receive queues (VNET_Q_REQ_RECV, VNET_Q_REP_RECV)
	 * set aside for messages whose trains are still arriving: other
	 * messages see that much less room (train_rx.c).
	 */
	u32 recv_reserved[2];
	/*
	 * By send queue, a bit per entry (its index modulo VNET_QUEUE_DEPTH):
	 * entries taken whose messages are read from the segment or a pin as
	 * their trains go out.  Such an entry stays until its train ends
	 * (train_tx.c), and the consumer index waits at it, while the
	 * entries after it are taken and go out meanwhile.  Once the train
	 * has ended, its bit in train_done says the entry may go.
	 */
	u32 train_held[2];
	u32 train_done[2];
	struct vnet_fw_ep_stats stats;
};

/*
 * Fragments of one train on the wire at most, whatever nic->train_window
 * says: the window remembers where each ends (train_tx.c).
 */
#define VNET_FW_TRAIN_WINDOW_MAX	16

/* A send channel's states; transport.c says which changes are legal. */
enum vnet_fw_chan_state {
	VNET_CHAN_FREE,
	VNET_CHAN_INFLIGHT,		/* sent, waiting for an ACK */
	VNET_CHAN_RETURNING,		/* to be written back to its sender */
	VNET_CHAN_PAUSED,		/* a train between two fragments, */
					/* its sender moving */
};

/*
 * One logical channel to a peer, stop-and-wait: the message in flight, kept
 * for retransmission -- or, for a train, a window of its fragments.  It counts
 * as unresolved for its sender while in flight without a NACK of its latest
 * transmission.
 */
struct vnet_fw_send_chan {
	struct vnet_desc msg;		/* as the sender's firmware checked it */
	/* A request: its sender's reply key; a reply: its request's. */
	u64 key;
	/*
	 * Pool buffer, or NULL: the whole payload, or, for a train read
	 * from its sender's segment, the fragment in flight.
	 */
	u8 *payload;
	/*
	 * A train (train_tx.c): the fragment on the wire, or next to go.
	 * Its bytes, until it is sent: in the segment, for zero copy, they
	 * are found again for each transmission.
	 */
	const u8 *frag;
	u32 frag_off;			/* where they go in the payload */
	u32 frag_len;
	u32 train;			/* seq of the train's first fragment */
	u32 frag_crc;			/* CRC32C of the payload to its end */
	u32 frag_sum;			/* CRC32C of its bytes alone */
	bool frag_fresh;		/* frag_sum is of them as they are now */
	bool frag_sent;			/* the latest has been on the wire */
	u32 frag_acked;			/* payload bytes ever ACKed */
	/*
	 * The train's window: its fragments from una_seq to seq are on the
	 * wire, the oldest starting at una_off.  Where each fragment ends,
	 * the CRC32C of the payload to there, and the stamp and time of its
	 * latest transmission (its round trip, rtt.c), by sequence number
	 * modulo VNET_FW_TRAIN_WINDOW_MAX; win_sampled: those whose latest
	 * transmission gave a round trip already.  narrow:
	 * no fragment past seq goes until una_seq is answered -- the first
	 * one, whose answer says whether the receiver takes the message,
	 * and the oldest after the timer sent it again.
	 */
	u32 una_seq;
	u32 una_off;
	u32 win_end[VNET_FW_TRAIN_WINDOW_MAX];
	u32 win_crc[VNET_FW_TRAIN_WINDOW_MAX];
	u32 win_stamp[VNET_FW_TRAIN_WINDOW_MAX];
	u64 win_sent[VNET_FW_TRAIN_WINDOW_MAX];
	u16 win_sampled;
	u32 frag_cap;			/* no fragment of it is larger */
	/*
	 * When its first fragment's answer opened its window, where the
	 * rest starts, and what else was going on then (pipeline.c).
	 */
	u64 gap_from;
	u32 gap_off;
	u32 gap_sent;			/* the peer's pipe.sent then */
	bool gap_open;			/* nothing else went its way since */
	/* Its latest transmission: the peer's pipe.sent, and alone? */
	u32 alone_sent;
	bool alone_tx;
	/*
	 * The next fragment to send again once the oldest is answered: the
	 * receiver dropped those after one it lost.  Past seq, none.
	 */
	u32 resend;
	bool narrow;
	/*
	 * A train read in place: from src's segment (VNET_FW_SRC_SEG) or
	 * pin, as it was at generation src_gen, from byte src_at of it.
	 */
	int src_pin;
	u32 src_gen;
	u64 src_at;
	struct vnet_fw_ep *src;		/* NULL once its owner closed */
	u32 src_ep;			/* its index, for retransmissions */
	u64 due;			/* when to retransmit */
	u64 sent_at;			/* the latest transmission */
	u64 taken_at;			/* when the message took the channel */
	u64 heard_at;			/* latest word from its receiver */
	u64 refused_at;			/* its first NACK, if refused */
	u64 returning_at;		/* when it started back to its sender */
	u32 seq;
	u32 first_stamp;		/* of this message's first transmission */
	u32 stamp;			/* of the latest transmission */
	u32 nack_incarnation;		/* of the peer, in its latest NACK */
	u16 retries;			/* timer retransmissions since an answer */
	u8 state;			/* enum vnet_fw_chan_state */
	u8 queue;			/* VNET_Q_REQ_SEND or VNET_Q_REP_SEND */
	u8 entry;			/* its index there, modulo the depth */
	u8 reason;			/* RETURNING: why */
	bool nacked;			/* the latest transmission was NACKed */
	bool sampled;			/* its answer gave a round trip (rtt.c) */
	/*
	 * ...NACKed "not resident" by the incarnation in nack_incarnation:
	 * a RESUME of that destination endpoint may retransmit it once.
	 */
	bool resume;
	/*
	 * A RESUME retransmitted this message already: any later one waits
	 * for the timer, so forged NACK and RESUME pairs cannot set the pace.
	 */
	bool resumed;
	bool refused;			/* NACKed at least once */
	bool refused_rewound;		/* its busy clock started at a RESTART */
	bool counted;			/* in src->unresolved */
	bool sync;			/* receiver must take seq as its new start */
	bool is_train;			/* sent as FRAG packets */
	bool from_seg;			/* read in place, a fragment at a time */
	/*
	 * ...and sent from its pages (ops->transmit_seg): the NIC's
	 * zero_copy when the message took the channel, so that what frag
	 * and frag_fresh mean holds for the whole train.
	 */
	bool pinned;
};

struct vnet_fw_recv_chan {
	u32 incarnation;		/* of the sender's route to us */
	u32 expected;			/* next sequence number to deliver */
	u16 train;			/* nic->trains index + 1, or 0 */
	u8 last_status;			/* what we ACKed expected - 1 with */
	bool valid;
};

/*
 * A message arriving as a train (train_rx.c): where its bytes land --
 * the destination's segment for an XFER, buf for a medium payload -- and
 * what the destination will see once the last fragment is in.  Its state
 * changes only through vnet_fw_train_begin() and vnet_fw_train_end().
 */
struct vnet_fw_train {
	struct vnet_desc msg;		/* as its destination will see it */
	u64 key;			/* as vnet_fw_send_chan.key */
	struct vnet_fw_ep *dst;		/* holds recv_reserved[rq] */
	u8 *buf;			/* VNET_MEDIUM_MAX bytes, the host's */
	u64 landed_at;			/* when its last fragment so far came */
	u64 started_at;			/* when its first fragment came */
	u32 peer;			/* slot of the sender */
	u32 first;			/* sequence number of its first fragment */
	u32 received;			/* payload bytes landed, in order */
	u32 crc;			/* CRC32C of those */
	u32 seg_gen;			/* dst->seg_gen it began landing in */
	u8 channel;
	u8 rq;				/* VNET_Q_REQ_RECV or VNET_Q_REP_RECV */
	bool busy;
};

/*
 * Entries of one receive queue of one endpoint that one peer's trains
 * may hold at once (train_rx.c); an honest sender starts no more trains
 * than that to one queue (vnet_fw_may_send()).
 */
#define VNET_FW_PEER_RESERVE	(VNET_QUEUE_DEPTH / 4)

/*
 * Train slots one peer may hold at a receiver, on whatever channel
 * numbers it sends (train_rx.c).  An honest sender starts half as many
 * (transport.c): a train it gave up may hold its slot over there until
 * it expires.
 */
#define VNET_FW_PEER_TRAINS	8

#define VNET_FW_TOOK_WORDS	4

/*
 * Decaying sums of samples of a time against a size, for a least-squares
 * line (pipeline.c).
 */
struct vnet_fw_fit {
	u64 w, x, xx, t, xt;
};

/*
 * The pipeline's two lines: alone and gap, each at 0 bytes (milli-units)
 * and per byte (milli-units, Q16).
 */
struct vnet_fw_pipe_lines {
	s64 a0, a1;
	s64 g0, g1;
};

/* What the pipeline to a peer costs, as its answers show it (pipeline.c). */
struct vnet_fw_pipe {
	struct vnet_fw_fit alone;	/* round trip of a packet alone */
	struct vnet_fw_fit gap;		/* a train's time per fragment */
	/* The lines as last known, and whether they were. */
	struct vnet_fw_pipe_lines last;
	bool known;
	u32 probes;			/* trains sized at another size */
	u32 frags;			/* of the latest train it sized */
	u32 sent;			/* DATA and FRAG packets to it, ever */
};

/*
 * The pipeline's two lines, for the host to show: milli-units, Q16/byte.
 * Those the fresh samples tell, or, when they do not both, with stored
 * set, the ones the firmware goes by, as last known.
 */
struct vnet_fw_pipe_info {
	s64 alone_base, alone_per_byte;
	s64 gap_base, gap_per_byte;
	u64 alone_samples, gap_samples;
	bool alone_known, gap_known, stored;
};

struct vnet_fw_peer {
	u32 nic_id;
	u32 incarnation;		/* of our route to it, on every packet */
	u8 mac[6];			/* the only source its frames may have */
	bool valid;			/* routed */
	bool used;			/* routed once: nic_id and state are its */
	u64 left_at;			/* when its route was last deleted */
	u32 unacked;			/* channels not free */
	u32 active_pos;			/* in nic->active while unacked */
	/*
	 * Largest payload of a packet to it: a message larger goes as a
	 * train of fragments this large, or as large as the link's MTU
	 * allows.  VNET_MEDIUM_MAX unless the host sets it.
	 */
	u32 frag_max;
	u32 trains;			/* nic->trains it is sending us */
	/* Its round trip, and how long to wait for an answer (rtt.c). */
	u64 srtt, rttvar;		/* 0: no sample yet */
	u64 rto;			/* 0: a quantum */
	struct vnet_fw_pipe pipe;	/* how large its fragments are */
	/*
	 * Its endpoints, by index modulo 256, whose latest answer to us was
	 * "delivered": on the card, as far as we know (transport.c).
	 */
	u64 took[VNET_FW_TOOK_WORDS];
	struct vnet_fw_send_chan *tx;	/* nic->nchannels each */
	struct vnet_fw_recv_chan *rx;	/* VNET_WIRE_CHANNELS each */
};

struct vnet_fw_nic_stats {
	u64 tx_data;
	u64 rx_data;
	u64 tx_ack;
	u64 rx_ack;
	u64 tx_nack[VNET_NACK_NR];
	u64 rx_nack[VNET_NACK_NR];
	u64 retransmits;
	u64 tx_resume;
	u64 rx_resume;
	u64 resume_retransmits;		/* of those, retransmissions they made */
	u64 returned[VNET_RET_NR];
	u64 tx_trains;			/* messages sent as trains */
	u64 tx_frags;			/* of tx_data, fragments */
	u64 rx_trains;			/* trains delivered */
	u64 rx_frags;			/* of rx_data, fragments */
	u64 trains_dropped;		/* reassemblies given up */
	u64 bad_frames;
	u64 bad_source;			/* not from the peer's routed address */
	u64 duplicates;
	u64 stale_acks;
	u64 no_route;
	u64 tx_mapper;
	u64 rx_mapper;
	/*
	 * Payload bytes: copied by the firmware (into a pool buffer, a
	 * staging slot or a segment), and of fragments sent from their
	 * sender's segment without a copy (transmit_seg).
	 */
	u64 copied_bytes;
	u64 tx_seg_bytes;
	/* Fragments sent again as filler, their source gone (train_tx.c). */
	u64 tx_fillers;
};

struct vnet_fw_nic {
	const struct vnet_fw_ops *ops;
	void *ctx;
	u32 nic_id;
	u32 nframes;
	/* Owner of each card frame while resident; written by the host. */
	struct vnet_fw_ep **frame_owner;
	u32 burst;			/* send attempts per visit, 2^k */
	/* Fragments of a train on the wire at once, 1 to ..._WINDOW_MAX. */
	u32 train_window;
	/* Payload bytes of a fragment: 0 to choose (pipeline.c), or at most. */
	u32 frag_size;
	/*
	 * A train from a segment goes out through ops->transmit_seg, when
	 * the host has one; a train keeps what this was when it started.
	 */
	bool zero_copy;
	u32 rr_next;
	bool held;			/* a message waits on a busy destination */
	/*
	 * Set by the host when it has posted a command, cleared by the host
	 * when it runs them: an endpoint's turn ends at its next send
	 * attempt, so that the command runs at the turn's boundary without
	 * waiting for the rest of the burst.  A hint: a turn cut short is
	 * only a shorter turn.
	 */
	bool host_waits;

	/* The transport.  Tables and buffers are allocated by the host. */
	u32 mtu;			/* largest packet the link carries */
	u32 nchannels;			/* send channels per peer, at most
					 * VNET_WIRE_CHANNELS
					 */
	u32 max_peers;
	u32 max_retries;		/* quanta of silence: "unreachable" */
	u64 quantum;			/* retransmission timer, in time units */
	u64 busy_timeout;		/* NACKed this long: returned "busy" */
	u64 timer_slack;		/* how late the host's timer may run it */
	struct vnet_fw_peer *peers;	/* max_peers */
	u16 *peer_of;			/* NIC id -> peer slot, VNET_FW_NO_PEER */
	u32 *active;			/* peers with unacked channels */
	u32 nactive;
	u8 **pool;			/* payload buffers, VNET_MEDIUM_MAX each */
	u32 pool_free;			/* pool[0 .. pool_free) are free */
	u32 npool;			/* pool_free when the NIC starts */
	u32 paused;			/* channels PAUSED */
	/*
	 * Messages being reassembled, each with its own VNET_MEDIUM_MAX
	 * buffer from the host; no peer holds more than half of them.
	 */
	struct vnet_fw_train *trains;
	u32 ntrains;
	u32 trains_busy;
	u32 stamp;
	u64 now;
	u64 last_scan;
	/*
	 * Payload bytes copied from one endpoint to another, or into a pool
	 * buffer, ever: an endpoint's turn ends once it has copied
	 * VNET_FW_TURN_BYTES (sched.c).
	 */
	u64 copied;
	struct vnet_fw_nic_stats stats;
};

#define VNET_FW_NO_PEER		0xffff
#define VNET_FW_MAX_PEERS	4096

/* The outcome of one round over the resident endpoints. */
struct vnet_fw_round {
	u32 messages;
	bool held;
	bool timer;			/* messages on the wire, trains coming */
					/* in: come back in a quantum */
};

void vnet_fw_ep_init(struct vnet_fw_ep *ep, struct vnet_name name,
		     u8 *staging, u64 reply_key);
void vnet_fw_frame_init(const struct vnet_fw_ep *ep, struct vnet_frame *frame);
void vnet_fw_frame_restore(const struct vnet_fw_ep *ep,
			   struct vnet_frame *frame);

struct vnet_fw_round vnet_fw_poll(struct vnet_fw_nic *nic, u64 now);
bool vnet_fw_arm_wakeup(struct vnet_fw_nic *nic);
void vnet_fw_disarm_wakeup(struct vnet_fw_nic *nic);

bool vnet_fw_recv_pending(const struct vnet_frame *frame);

void vnet_fw_transport_init(struct vnet_fw_nic *nic);
/* vnet_fw_route_add(): no slot now, or none until a deleted one is free. */
#define VNET_FW_ROUTES_FULL	(-1)
#define VNET_FW_ROUTES_WAIT	(-2)
int vnet_fw_route_add(struct vnet_fw_nic *nic, u32 nic_id, const u8 *mac,
		      u64 now);
u64 vnet_fw_msg_lifetime(const struct vnet_fw_nic *nic);
u32 vnet_fw_pool_share(const struct vnet_fw_nic *nic);
bool vnet_fw_route_del(struct vnet_fw_nic *nic, u32 nic_id, u64 now);
void vnet_fw_renumber(struct vnet_fw_nic *nic, u32 nic_id, u64 now);
void vnet_fw_receive(struct vnet_fw_nic *nic, const struct vnet_fw_bytes *pkt,
		     const u8 *src_mac, u64 now);
void vnet_fw_timer(struct vnet_fw_nic *nic, u64 now);
void vnet_fw_ep_forget(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep);
void vnet_fw_fail_all(struct vnet_fw_nic *nic);
bool vnet_fw_mapper_send(struct vnet_fw_nic *nic, const u8 *mac,
			 const void *payload, u32 len);
bool vnet_fw_sends_pending(const struct vnet_fw_ep *ep,
			   const struct vnet_frame *frame);
bool vnet_fw_pipe_show(const struct vnet_fw_peer *p,
		       struct vnet_fw_pipe_info *in);
u32 vnet_fw_pipe_predict(const struct vnet_fw_nic *nic,
			 const struct vnet_fw_peer *p, u32 len, u32 x, u64 *t);

#endif /* _VNET_FW_H */
