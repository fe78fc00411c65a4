package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/tablekit/tablekit/patterns/eventual"
)

const queueUsage = `peek|replay|purge --queue NAME[,NAME…] [flags]

Works on the queues of a patterns/eventual processor and their poison
queues (NAME-poison); --container names the processor's blob container, where
poison records (and large payloads) are kept.

  peek    show up to --max messages (32 per queue at most, the service's limit
          for a peek) of the work queues, or with --poison of the poison queues:
          each message's id, kind, envelope id, creation time, attempts
          (dequeue count) and, for a poison message, the reason and the
          handler's error from its record
  replay  move poison messages back into their work queues byte for byte
          (eventual's Processor.Replay): --kind chooses them by kind, --max
          bounds them; a message older than its Once markers stays unless --stale
  purge   delete the poison messages (with their records; default, or
          --poison), the work queue's messages (--work), or both (--all);
          needs --yes, or --dry-run to count`

const queueExample = `  tablekit queue peek --queue orders --poison --container orders-blobs
  tablekit queue replay --queue orders --container orders-blobs --kind Archive.v1
  tablekit queue purge --queue orders --poison --container orders-blobs --yes`

func runQueue(c *cli, args []string) int {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	c.name = strings.TrimSpace("queue " + sub)
	fs := c.flags(queueUsage, queueExample)
	var cf connFlags
	cf.register(fs, "", "queues'")
	queues := fs.String("queue", "", "work queue names, comma-separated (their poison queues are NAME-poison)")
	containerName := fs.String("container", "", "the processor's blob container (poison records, large payloads)")
	poison := fs.Bool("poison", false, "peek: the poison queues; purge: the poison queues (the default)")
	workQ := fs.Bool("work", false, "purge: the work queues' messages")
	both := fs.Bool("all", false, "purge: the work and the poison queues")
	maxN := fs.Int("max", 0, "peek: at most this many messages per queue (0: 32); replay: at most this many in all (0: all)")
	kind := fs.String("kind", "", "replay: only messages of this kind")
	stale := fs.Bool("stale", false, "replay: also messages created longer ago than the Once markers are kept (they may apply twice)")
	dry := fs.Bool("dry-run", false, "purge: count the messages, delete nothing")
	yes := fs.Bool("yes", false, "purge: yes, delete")
	if code, done := c.parse(fs, args, 0); done {
		return code
	}
	switch sub {
	case "peek", "replay", "purge":
	case "":
		return c.fail(usagef("say peek, replay or purge"))
	default:
		return c.fail(usagef("unknown queue command %q: want peek, replay or purge", sub))
	}
	names := splitList(*queues)
	if len(names) == 0 {
		return c.fail(usagef("--queue is required"))
	}
	if *maxN < 0 {
		return c.fail(usagef("--max cannot be negative"))
	}
	cn, err := c.connect(&cf, true)
	if err != nil {
		return c.fail(err)
	}
	if cn.acct == nil {
		return c.fail(usagef("queues need an account: a connection string, --account-url or an account SAS URL"))
	}
	svc, err := cn.acct.QueueService()
	if err != nil {
		return c.fail(err)
	}
	for _, n := range names {
		if _, err := cn.acct.Queue(n); err != nil {
			return c.fail(err)
		}
	}
	var cc *container.Client
	if *containerName != "" {
		if cc, err = cn.acct.Container(*containerName); err != nil {
			return c.fail(err)
		}
	}
	qs := eventual.QueuesOf(svc, names...)
	p, err := eventual.New(qs, cc, eventual.Config{})
	if err != nil {
		return c.fail(err)
	}
	work, cancel := c.workContext()
	defer cancel()
	switch sub {
	case "peek":
		return c.queuePeek(work, p, qs, names, *poison, *maxN)
	case "replay":
		opts := eventual.ReplayOptions{Max: *maxN, Stale: *stale}
		if *kind != "" {
			k := *kind
			opts.Filter = func(r eventual.PoisonRecord) bool { return r.Kind == k }
		}
		moved, err := p.Replay(c.ctx, opts)
		text := fmt.Sprintf("replayed %d poison messages into %s\n", moved, strings.Join(names, ", "))
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				c.warn("%s", line)
			}
			if c.stopped() {
				return c.interrupted(fmt.Sprintf("%d messages replayed", moved), "", "")
			}
			if moved == 0 && !errors.Is(err, eventual.ErrStaleReplay) {
				return c.fail(err)
			}
			c.summary(map[string]any{"command": "queue replay", "status": "partial", "replayed": moved, "error": oneLine(err)}, text, false)
			return exitPartial
		}
		c.summary(map[string]any{"command": "queue replay", "status": "done", "replayed": moved}, text, false)
		return exitOK
	default:
		which := "poison"
		switch {
		case *both:
			which = "all"
		case *workQ && *poison:
			which = "all"
		case *workQ:
			which = "work"
		}
		if !*dry && !*yes {
			return c.fail(usagef("purge deletes messages for good: add --yes (or --dry-run to count them)"))
		}
		return c.queuePurge(work, qs, names, cc, which, *dry)
	}
}

type peeked struct {
	Queue     string    `json:"queue"`
	MessageID string    `json:"messageId"`
	Inserted  time.Time `json:"inserted"`
	Attempts  int64     `json:"attempts"`
	Kind      string    `json:"kind,omitempty"`
	ID        string    `json:"id,omitempty"`
	Created   time.Time `json:"created,omitzero"`
	Claim     string    `json:"claim,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Error     string    `json:"error,omitempty"`
	Note      string    `json:"note,omitempty"`
}

func (c *cli) queuePeek(ctx context.Context, p *eventual.Processor, qs []eventual.Queue, names []string, poison bool, maxN int) int {
	n := int32(32)
	if maxN > 0 && maxN < 32 {
		n = int32(maxN)
	}
	var all []peeked
	for i, q := range qs {
		client, qname := q.Work, names[i]
		if poison {
			client, qname = q.Poison, names[i]+eventual.PoisonSuffix
		}
		resp, err := client.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(n)})
		if err != nil {
			return c.fail(fmt.Errorf("peek %s: %w", qname, err))
		}
		for _, m := range resp.Messages {
			if m == nil || m.MessageID == nil || m.MessageText == nil {
				continue
			}
			pk := peeked{Queue: qname, MessageID: *m.MessageID}
			if m.InsertionTime != nil {
				pk.Inserted = m.InsertionTime.UTC()
			}
			if m.DequeueCount != nil {
				pk.Attempts = *m.DequeueCount
			}
			text := *m.MessageText
			if poison {
				rec, original, wrapped := eventual.ParsePoison(text)
				if !wrapped {
					var err error
					rec, err = p.PoisonRecord(ctx, names[i], *m.MessageID)
					if err != nil {
						pk.Note = "no poison record"
						if !errors.Is(err, eventual.ErrNoPoisonRecord) {
							pk.Note = "poison record not read: " + oneLine(err)
						}
					}
				}
				text = original
				pk.Reason, pk.Error = rec.Reason, firstLine(rec.Error)
				if rec.DequeueCount > 0 {
					pk.Attempts = rec.DequeueCount
				}
			}
			if env, err := eventual.DecodeMessage(text); err == nil {
				pk.Kind, pk.ID, pk.Created, pk.Claim = env.Kind, env.ID, env.Created, env.Claim
			} else if pk.Note == "" {
				pk.Note = "not an eventual message"
			}
			all = append(all, pk)
		}
	}
	if c.json {
		for _, pk := range all {
			c.summary(pk, "", false)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tMESSAGE\tINSERTED\tATTEMPTS\tKIND\tID\tCREATED\tREASON\tERROR")
	for _, pk := range all {
		created := ""
		if !pk.Created.IsZero() {
			created = pk.Created.Format(time.RFC3339)
		}
		errText := pk.Error
		if pk.Note != "" {
			errText = strings.TrimSpace(errText + " (" + pk.Note + ")")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", pk.Queue, pk.MessageID, pk.Inserted.Format(time.RFC3339), pk.Attempts,
			cell(pk.Kind, c.outTTY), cell(pk.ID, c.outTTY), created, pk.Reason, cell(errText, c.outTTY))
	}
	tw.Flush()
	if len(all) == 0 {
		fmt.Fprintln(c.out, "(no messages)")
	}
	return exitOK
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func (c *cli) queuePurge(ctx context.Context, qs []eventual.Queue, names []string, cc *container.Client, which string, dry bool) int {
	counts := map[string]int64{}
	var total int64
	for i, q := range qs {
		var targets []*azqueue.QueueClient
		var labels []string
		if which == "work" || which == "all" {
			targets, labels = append(targets, q.Work), append(labels, names[i])
		}
		if which == "poison" || which == "all" {
			targets, labels = append(targets, q.Poison), append(labels, names[i]+eventual.PoisonSuffix)
		}
		for j, qc := range targets {
			label := labels[j]
			isPoison := strings.HasSuffix(label, eventual.PoisonSuffix) && label != names[i]
			if dry {
				props, err := qc.GetProperties(ctx, nil)
				if err != nil {
					return c.fail(fmt.Errorf("%s: %w", label, err))
				}
				if props.ApproximateMessagesCount != nil {
					counts[label] = int64(*props.ApproximateMessagesCount)
					total += counts[label]
				}
				continue
			}
			if !isPoison {
				props, _ := qc.GetProperties(ctx, nil)
				if _, err := qc.ClearMessages(ctx, nil); err != nil {
					return c.fail(fmt.Errorf("clear %s: %w", label, err))
				}
				if props.ApproximateMessagesCount != nil {
					counts[label] = int64(*props.ApproximateMessagesCount)
					total += counts[label]
				}
				continue
			}
			// Poison messages one by one, each with its record blob.
			for !c.stopped() {
				resp, err := qc.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: to.Ptr(int32(32)), VisibilityTimeout: to.Ptr(int32(60))})
				if err != nil {
					return c.fail(fmt.Errorf("receive from %s: %w", label, err))
				}
				if len(resp.Messages) == 0 {
					break
				}
				for _, m := range resp.Messages {
					if m == nil || m.MessageID == nil || m.PopReceipt == nil {
						continue
					}
					if _, err := qc.DeleteMessage(ctx, *m.MessageID, *m.PopReceipt, nil); err != nil {
						return c.fail(fmt.Errorf("delete message %s of %s: %w", *m.MessageID, label, err))
					}
					if cc != nil {
						if err := eventual.DeleteBlob(ctx, cc, eventual.PoisonRecordPrefix+label+"/"+*m.MessageID); err != nil {
							c.warn("message %s of %s deleted, its record blob not: %s", *m.MessageID, label, oneLine(err))
						}
					}
					counts[label]++
					total++
				}
			}
		}
	}
	verb := "purged"
	if dry {
		verb = "dry run: would purge about"
	}
	var parts []string
	for _, n := range names {
		for _, l := range []string{n, n + eventual.PoisonSuffix} {
			if v, ok := counts[l]; ok {
				parts = append(parts, fmt.Sprintf("%s %d", l, v))
			}
		}
	}
	text := fmt.Sprintf("%s %d messages (%s)\n", verb, total, strings.Join(parts, ", "))
	if c.stopped() {
		return c.interrupted(fmt.Sprintf("%d messages purged", total), "", "")
	}
	c.summary(map[string]any{"command": "queue purge", "status": "done", "dryRun": dry, "messages": total, "byQueue": counts}, text, false)
	return exitOK
}
