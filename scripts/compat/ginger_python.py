"""Drives the public ginger-python SDK, unchanged, against a running Tender (docs/compatibility.md).

    GINGER_PYTHON=/path/to/ginger-python TENDER_URL=http://127.0.0.1:8080 TENDER_KEY=test_... python3 scripts/compat/ginger_python.py

Needs `requests` (Debian: python3-requests). Prints one line per check, exits 1 if any failed. The
SDK is imported from GINGER_PYTHON, never copied here; the card entry and the 3-D Secure pages are
the customer's browser, done with requests.
"""
import datetime
import os
import sys

import requests

sys.path.insert(0, os.environ['GINGER_PYTHON'])
from ginger_sdk import Ginger  # noqa: E402
from ginger_sdk.api_client import ServerError  # noqa: E402

BASE = os.environ.get('TENDER_URL', 'http://127.0.0.1:8080').rstrip('/')
KEY = os.environ['TENDER_KEY']
failed = 0


def check(name, ok):
    global failed
    print(('ok   ' if ok else 'FAIL ') + name)
    failed += 0 if ok else 1


def readme_order(capture_mode=None, locale=None):
    txn = {'payment_method': 'credit-card'}
    if capture_mode:
        txn['capture_mode'] = capture_mode
    order = {
        'merchant_order_id': 'my-custom-order-id-12345',
        'currency': 'EUR',
        'amount': 2500,
        'description': 'Purchase order 12345',
        'return_url': 'https://www.example.com',
        'transactions': [txn],
    }
    if locale:
        order['customer'] = {'locale': locale}
    return order


def pay_card(client, order, pan='4111111111111111'):
    """The customer pays: vault, authenticate (through the SDK's send), 3-D Secure pages."""
    txn = order['transactions'][0]
    card = requests.post(BASE + '/vault/v1/cards/', auth=(KEY, ''), json={
        'pan': pan, 'expiry': '12%d' % (datetime.date.today().year + 3), 'name': 'Ada Lovelace',
        'setup_token': txn['payment_method_details']['setup_token'],
    }).json()
    auth = client.send('POST', '/orders/{}/transactions/{}/authenticate/'.format(order['id'], txn['id']),
                       {'vault_token': card['vault_token'], 'cvc': '123'})
    url = auth['redirect_url']
    for _ in range(10):
        if not url or not url.startswith(BASE):
            break
        url = requests.get(url, allow_redirects=False).headers.get('location')
    return client.get_order(order['id'])


client = Ginger.create_client(BASE, KEY)

project = client.send('GET', '/merchants/self/projects/self/')
check('send GET project', 'credit-card' in project['payment_methods'])
currencies = client.send('GET', '/merchants/self/projects/self/currencies/')
check('send GET currencies', 'EUR' in currencies['payment_methods']['credit-card']['currencies'])

order = client.create_order(readme_order())
check('create_order (README body) has order_url', order['id'] in order.get('order_url', ''))

got = client.get_order(order['id'])
check('get_order', got['id'] == order['id'])
got['description'] = 'New Order Description'
updated = client.update_order(order['id'], got)
check('update_order (GET, change, PUT all)', updated['description'] == 'New Order Description'
      and client.get_order(order['id'])['description'] == 'New Order Description')

paid = pay_card(client, client.create_order(readme_order()))
check('send POST authenticate, card sale completed', paid['status'] == 'completed')
refund = client.refund_order(paid['id'], {'amount': 123, 'description': 'My refund'})
check('refund_order', refund['refund_of_order_id'] == paid['id'])

auth = pay_card(client, client.create_order(readme_order('manual')))
client.capture_order_transaction(auth['id'], auth['transactions'][0]['id'])
check('capture_order_transaction', 'has-captures' in client.get_order(auth['id'])['flags'])

auth2 = pay_card(client, client.create_order(readme_order('manual')))
void = client.send('POST', '/orders/{}/transactions/{}/voids/'.format(auth2['id'], auth2['transactions'][0]['id']))
check('send POST voids', void['void_of_order_id'] == auth2['id'])

open_order = client.create_order({'currency': 'EUR', 'amount': 995})
check('send DELETE order (cancel)', client.send('DELETE', '/orders/{}/'.format(open_order['id']))['status'] == 'cancelled')
later = client.create_order({'currency': 'EUR', 'amount': 995})
started = client.send('POST', '/orders/{}/transactions/'.format(later['id']), {'payment_method': 'credit-card'})
check('send POST transactions', len(started['transactions']) == 1)
link = client.send('POST', '/paymentlinks/', {'merchant_order_id': 'link-1', 'amount': 1250, 'currency': 'EUR'})
check('send POST/GET paymentlinks', client.send('GET', '/paymentlinks/{}/'.format(link['id']))['id'] == link['id'])
found = client.send('POST', '/search/orders/', {'query': '*', 'size': 3})
check('send POST search', found['total'] >= 6 and len(found['orders']) == 3)

try:
    client.create_order({'currency': 'EUR', 'amount': 100,
                         'transactions': [{'payment_method': 'wechat'}]})
    check('unknown method -> ServerError', False)
except ServerError as e:
    check('unknown method -> ServerError naming the method', 'payment method wechat' in str(e))

declined = pay_card(client, client.create_order(readme_order(locale='nl_NL')), '4000000000000002')
check('declined card: customer_message (nl)', declined['transactions'][0]['customer_message'].startswith('Je betaling'))

print('%d failed' % failed if failed else 'all passed')
sys.exit(1 if failed else 0)
