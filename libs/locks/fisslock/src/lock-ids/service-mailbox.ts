import type { Mailbox, Message } from '@lockfabric/ports';

/**
 * One node service mailbox shared by two servers (the fallback lock manager and the id-map
 * daemon): each sees only its own messages, so a server that receives "everything" cannot take
 * the other's. Both substrates hand a message to the first waiting receive whose match accepts it.
 */
export function mailboxOnly(mailbox: Mailbox, accept: (message: Message) => boolean): Mailbox {
  return {
    self: mailbox.self,
    send: (message) => mailbox.send(message),
    receive: (match, options) => mailbox.receive((message) => accept(message) && match(message), options),
  };
}

export function mailboxWithout(mailbox: Mailbox, reject: (message: Message) => boolean): Mailbox {
  return mailboxOnly(mailbox, (message) => !reject(message));
}
