package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// isBlobSpec reports whether an --out or --in names a blob.
func isBlobSpec(s string) bool {
	return strings.HasPrefix(s, "blob:") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// blobClient returns the block blob an --out or --in names:
//
//   - blob:CONTAINER/NAME, in the table's account (or --blob-*'s);
//   - a blob URL with a SAS (…/CONTAINER/NAME?sv=…&sig=…), any account;
//   - a blob URL without one, in the table's account or --blob-*'s.
func (c *cli) blobClient(spec string, tableConn *conn, bf *connFlags) (*blockblob.Client, string, error) {
	acctConn := tableConn
	if bf.given() {
		cn, err := c.connect(bf, false)
		if err != nil {
			return nil, "", err
		}
		acctConn = cn
	}
	var containerName, blobName, label string
	if rest, ok := strings.CutPrefix(spec, "blob:"); ok {
		containerName, blobName, _ = strings.Cut(rest, "/")
		label = spec
	} else {
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return nil, "", usagef("%q is not a blob URL", spec)
		}
		c.red.Add(sigOfURL(u)...)
		label = u.Scheme + "://" + u.Host + u.Path
		if u.Query().Get("sig") != "" {
			lim, err := c.throttle()
			if err != nil {
				return nil, "", err
			}
			co, _ := c.azOptions()
			co.PerRetryPolicies = append(co.PerRetryPolicies, c.meter.Policy(), policy.Policy(lim))
			bb, err := blockblob.NewClientWithNoCredential(spec, &blockblob.ClientOptions{ClientOptions: co})
			if err != nil {
				return nil, "", usagef("blob URL: %v", err)
			}
			return bb, label, nil
		}
		segs := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(segs) >= 3 && !strings.Contains(u.Hostname(), ".blob.") {
			segs = segs[1:] // an emulator's path starts with the account
		}
		if len(segs) < 2 {
			return nil, "", usagef("%q names no container and blob", label)
		}
		containerName, blobName = segs[0], strings.Join(segs[1:], "/")
	}
	if containerName == "" || blobName == "" {
		return nil, "", usagef("%q: want blob:CONTAINER/NAME or a blob URL", spec)
	}
	if acctConn == nil || acctConn.acct == nil {
		return nil, "", usagef("a blob needs an account: give a SAS in the blob URL, or --blob-connection-string")
	}
	cc, err := acctConn.acct.Container(containerName)
	if err != nil {
		return nil, "", err
	}
	c.containers = append(c.containers, cc)
	return cc.NewBlockBlobClient(blobName), label, nil
}

// createContainers creates the containers of the blobs named so far when
// they are missing (a SAS URL's container is not: its token may not allow it).
func (c *cli) createContainers(ctx context.Context) error {
	for _, cc := range c.containers {
		if _, err := cc.Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
			return fmt.Errorf("create the container: %w", err)
		}
	}
	return nil
}

func sigOfURL(u *url.URL) []string {
	if s := u.Query().Get("sig"); s != "" {
		return []string{s, url.QueryEscape(s)}
	}
	return nil
}
