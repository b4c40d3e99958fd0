<?php
// Drives the public ginger-php SDK, unchanged, against a running Tender (docs/compatibility.md).
//   GINGER_PHP=/path/to/ginger-php TENDER_URL=http://127.0.0.1:8080 TENDER_KEY=test_... php scripts/compat/ginger-php.php
// Prints one line per check and exits 1 if any failed. The SDK is loaded from GINGER_PHP (its src/),
// never copied here; the card entry and the 3-D Secure pages are the customer's browser, done with curl.
require __DIR__ . '/common.php';

spl_autoload_register(function ($fqcn) {
    if (substr($fqcn, 0, 7) !== 'Ginger\\') return;
    $path = getenv('GINGER_PHP') . '/src/' . str_replace('\\', '/', substr($fqcn, 7)) . '.php';
    if (is_file($path)) require_once $path;
});

$client = \Ginger\Ginger::createClient(BASE, KEY);

// project and currencies
$project = $client->send('GET', '/merchants/self/projects/self/');
check('send GET project', isset($project['id']) && in_array('credit-card', $project['payment_methods']));
$currencies = $client->getCurrencyList();
check('getCurrencyList', in_array('EUR', $currencies['payment_methods']['credit-card']['currencies']));

// README: create with a transaction, redirect to order_url
$order = $client->createOrder(readmeOrder());
check('createOrder (README body) has order_url', isset($order['order_url']) && str_contains($order['order_url'], $order['id']));
check('createOrder has payment_url and setup_token', isset($order['transactions'][0]['payment_url'], $order['transactions'][0]['payment_method_details']['setup_token']));

// README: update flow
$got = $client->getOrder($order['id']);
check('getOrder', $got['id'] === $order['id'] && $got['status'] === 'new');
$got['description'] = 'New Order Description';
$updated = $client->updateOrder($order['id'], $got);
check('updateOrder (GET, change, PUT all)', $updated['description'] === 'New Order Description' && $client->getOrder($order['id'])['description'] === 'New Order Description');

// a webshop plugin's body: customer address_type customer, [""] phone, PHP [] for extra, order lines
$woo = $client->createOrder(wooOrder());
check('createOrder (WooCommerce body, extra [])', $woo['customer']['address_type'] === 'customer' && !isset($woo['customer']['phone_numbers']) && $woo['extra'] === []);

// pay by card: vault and 3-D Secure as the customer's browser; authenticate through send()
$paid = payCard($client, $client->createOrder(readmeOrder()));
check('send POST authenticate, card sale completed', $paid['status'] === 'completed');

$refund = $client->refundOrder($paid['id'], ['amount' => 123, 'description' => 'My refund']);
check('refundOrder', $refund['refund_of_order_id'] === $paid['id'] && $refund['amount'] === 123);

// pre-authorization and capture
$auth = payCard($client, $client->createOrder(readmeOrder('manual')));
$result = $client->captureOrderTransaction($auth['id'], $auth['transactions'][0]['id']);
$captured = $client->getOrder($auth['id']);
check('captureOrderTransaction', in_array('has-captures', $captured['flags']) && $captured['transactions'][0]['is_capturable'] === false);

// void through send(), with and without PHP's empty [] body
$auth2 = payCard($client, $client->createOrder(readmeOrder('manual')));
$void = $client->send('POST', sprintf('/orders/%s/transactions/%s/voids/', $auth2['id'], $auth2['transactions'][0]['id']));
check('send POST voids', isset($void['void_of_order_id']) && $void['void_of_order_id'] === $auth2['id']);
$auth3 = payCard($client, $client->createOrder(readmeOrder('manual')));
$void3 = $client->send('POST', sprintf('/orders/%s/transactions/%s/voids/', $auth3['id'], $auth3['transactions'][0]['id']), []);
check('send POST voids with [] body', isset($void3['void_of_order_id']));

// cancel, start a transaction later, payment links, search
$open = $client->createOrder(['currency' => 'EUR', 'amount' => 995, 'description' => 'Cancel me']);
$cancelled = $client->send('DELETE', sprintf('/orders/%s/', $open['id']));
check('send DELETE order (cancel)', $cancelled['status'] === 'cancelled');
$later = $client->createOrder(['currency' => 'EUR', 'amount' => 995, 'return_url' => 'https://shop.example/return']);
$started = $client->send('POST', sprintf('/orders/%s/transactions/', $later['id']), ['payment_method' => 'credit-card']);
check('send POST transactions', count($started['transactions']) === 1 && isset($started['order_url']));
$link = $client->send('POST', '/paymentlinks/', ['merchant_order_id' => 'link-1', 'amount' => 1250, 'currency' => 'EUR']);
$linkAgain = $client->send('GET', sprintf('/paymentlinks/%s/', $link['id']));
check('send POST/GET paymentlinks', $linkAgain['id'] === $link['id'] && isset($link['payment_url']));
$found = $client->send('POST', '/search/orders/', ['query' => '*', 'size' => 5]);
check('send POST search', $found['total'] >= 8 && count($found['orders']) === 5);

// error mapping: the SDK throws ServerError with type, status and message
try {
    $client->createOrder(['currency' => 'EUR', 'amount' => 100, 'transactions' => [['payment_method' => 'wechat']]]);
    check('unknown method -> ServerError', false);
} catch (\Ginger\ApiClient\ServerError $e) {
    check('unknown method -> ServerError naming the method', str_contains($e->getMessage(), 'ValidationError(400)') && str_contains($e->getMessage(), 'payment method wechat'));
}

// a declined card: customer_message in the order's locale
$declined = payCard($client, $client->createOrder(readmeOrder(null, 'nl_NL')), '4000000000000002');
check('declined card: customer_message (nl)', $declined['transactions'][0]['status'] === 'declined' && str_starts_with($declined['transactions'][0]['customer_message'], 'Je betaling'));

finish();
