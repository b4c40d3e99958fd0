"""Drives the public ginger-python SDK, unchanged, through every payment method of docs/payment-methods.md
against a running Tender whose project has them on (`tender project methods --project ID --methods all`):
get_ideal_issuers, create_order with the method, the customer's choice on the method's sandbox page
(plain HTTP, as a browser posts the form, or with PAY_IN_BROWSER in a real browser that
scripts/compat/sdk-browser.test.ts drives; bank transfer and viacash by the test endpoint through
send), captures for BNPL (capture_order_transaction, or per order line through send), refund_order
(viacash refused). In the browser also amex (the card form) and pay-now (the customer picks iDEAL).

    GINGER_PYTHON=/path/to/ginger-python TENDER_URL=http://127.0.0.1:8080 TENDER_KEY=test_... python3 scripts/compat/ginger_python_methods.py

The SDK is imported from GINGER_PYTHON, never copied here.
"""
import os
import re
import sys
from urllib.parse import urlparse

import requests

sys.path.insert(0, os.environ['GINGER_PYTHON'])
from ginger_sdk import Ginger  # noqa: E402
from ginger_sdk.api_client import ServerError  # noqa: E402

BASE = os.environ.get('TENDER_URL', 'http://127.0.0.1:8080').rstrip('/')
KEY = os.environ['TENDER_KEY']
IN_BROWSER = bool(os.environ.get('PAY_IN_BROWSER'))
SHOP = os.environ.get('SHOP_URL', 'https://shop.example').rstrip('/')
failed = 0


def check(name, ok):
    global failed
    print(('ok   ' if ok else 'FAIL ') + name)
    failed += 0 if ok else 1


def method_order(method, currency='EUR', country='NL'):
    txn = {'payment_method': method}
    if method == 'ideal':
        txn['payment_method_details'] = {'issuer_id': 'RABONL2U'}
    return {
        'currency': currency,
        'amount': 2915,
        'description': 'ginger-python ' + method,
        'return_url': SHOP + '/return',
        'customer': {'first_name': 'Anne', 'last_name': 'de Vries', 'email_address': 'anne@example.nl', 'address': 'Kerkstraat 12',
                     'postal_code': '1012AB', 'city': 'Amsterdam', 'country': country, 'locale': 'en_GB'},
        'order_lines': [
            {'name': 'Mug', 'type': 'physical', 'amount': 1210, 'currency': currency, 'quantity': 2, 'vat_percentage': 2100, 'merchant_order_line_id': '1'},
            {'name': 'Shipping', 'type': 'shipping_fee', 'amount': 495, 'currency': currency, 'quantity': 1, 'vat_percentage': 2100,
             'merchant_order_line_id': '2'},
        ],
        'transactions': [txn],
    }


def pay_in_browser(url, via=''):
    """PAY_IN_BROWSER: the caller's browser pays; asks on stdout, answers 303 on stdin when back at the shop."""
    print(('PAY %s %s' % (url, via)).rstrip(), flush=True)
    return int(sys.stdin.readline().strip() or 0)


def choose(order, outcome):
    """The test customer picks an outcome on the sandbox page: GET it, POST its form with the CSRF token."""
    url = order['transactions'][-1]['payment_url']
    if IN_BROWSER:
        return pay_in_browser(url)
    action = urlparse(url).path + 'outcome/'
    page = requests.get(url, timeout=10).text
    m = re.search(r'action="' + re.escape(action) + r'"[^>]*><input type="hidden" name="csrf" value="([^"]+)"', page)
    if not m:
        return 0
    return requests.post(BASE + action, data={'csrf': m.group(1), 'outcome': outcome}, allow_redirects=False, timeout=10).status_code


client = Ginger.create_client(BASE, KEY)
issuers = client.get_ideal_issuers()
check('get_ideal_issuers', any(i['id'] == 'RABONL2U' for i in issuers))

for method, currency in [('ideal', 'EUR'), ('bancontact', 'EUR'), ('paypal', 'USD'), ('sofort', 'EUR'), ('giropay', 'EUR'), ('payconiq', 'EUR'),
                         ('swish', 'SEK'), ('mobilepay', 'DKK'), ('klarna-pay-now', 'EUR'), ('klarna-direct-debit', 'EUR')]:
    order = client.create_order(method_order(method, currency))
    check(method + ': create_order has a payment_url', 'payment_url' in order['transactions'][0])
    check(method + ': paid on its sandbox page', choose(order, 'paid') == 303 and client.get_order(order['id'])['status'] == 'completed')
    refund = client.refund_order(order['id'], {'amount': 495, 'description': 'shipping back'})
    check(method + ': refund_order', 'is-refund' in refund.get('flags', []))

for method in ['klarna-pay-later', 'afterpay']:
    order = client.create_order(method_order(method))
    check(method + ': authorized on its sandbox page', choose(order, 'paid') == 303 and client.get_order(order['id'])['transactions'][0]['is_capturable'])
    captures = '/orders/%s/transactions/%s/captures/' % (order['id'], order['transactions'][0]['id'])
    if method == 'klarna-pay-later':
        # two shipments: a mug, then the rest (the other mug and the shipping)
        first = client.send('POST', captures, {'order_lines': [{'merchant_order_line_id': '1', 'quantity': 1}]})
        check(method + ': a capture per order line takes the line\'s amount',
              first['amount'] == 1210 and client.get_order(order['id'])['transactions'][0]['is_capturable'])
        rest = client.send('POST', captures, {'order_lines': [{'merchant_order_line_id': '1'}, {'merchant_order_line_id': '2'}]})
        check(method + ': the second capture per order line completes it',
              rest['amount'] == 1705 and client.get_order(order['id'])['transactions'][0]['status'] == 'completed')
    else:
        client.capture_order_transaction(order['id'], order['transactions'][0]['id'])
    check(method + ': captured, has-captures', 'has-captures' in client.get_order(order['id'])['flags'])
    refund = client.refund_order(order['id'], {'amount': 1210, 'order_lines': [method_order(method)['order_lines'][0]]})
    check(method + ': refund_order with order_lines', 'is-refund' in refund['flags'])

for method, country in [('bank-transfer', 'NL'), ('viacash', 'DE')]:
    order = client.create_order(method_order(method, 'EUR', country))
    txn = order['transactions'][0]
    check(method + ': pending with what to pay', txn['status'] == 'pending' and 'reference' in txn['payment_method_details'])
    paid = client.send('POST', '/test/orders/%s/bank-transfer/' % order['id'], {'outcome': 'paid', 'amount': 2915})
    check(method + ': completed by the test endpoint', paid['status'] == 'completed')
    try:
        client.refund_order(order['id'], {'amount': 100})
        check(method + ': refund_order', method != 'viacash')
    except ServerError as e:
        check(method + ': refund_order refused (no refunds)', method == 'viacash' and 'can not be refunded' in str(e))

if IN_BROWSER:
    # amex: the card form (American Express only), 3-D Secure frictionless; pay-now: the customer picks iDEAL
    for method, via in [('amex', ''), ('pay-now', 'iDEAL')]:
        order = client.create_order(method_order(method))
        back = pay_in_browser(order['transactions'][0]['payment_url'], via)
        check(method + ': paid in the browser', back == 303 and client.get_order(order['id'])['status'] == 'completed')
        refund = client.refund_order(order['id'], {'amount': 495, 'description': 'shipping back'})
        check(method + ': refund_order', 'is-refund' in refund['flags'])

print('%d failed' % failed if failed else 'all passed')
sys.exit(1 if failed else 0)
