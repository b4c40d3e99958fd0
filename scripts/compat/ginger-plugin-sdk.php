<?php
// Drives the public ginger-php-plugin-sdk (with ginger-php), unchanged, against a running Tender,
// building the order as the OXID plugin does with it (docs/compatibility.md).
//   GINGER_PHP=/path/to/ginger-php PLUGIN_SDK=/path/to/ginger-php-plugin-sdk TENDER_URL=... TENDER_KEY=... \
//     php scripts/compat/ginger-plugin-sdk.php
// A small autoloader stands in for Composer (no Packagist here); both SDKs stay where they are.
require __DIR__ . '/common.php';

spl_autoload_register(function ($fqcn) {
    $roots = ['GingerPluginSdk\\' => getenv('PLUGIN_SDK') . '/src/', 'Ginger\\' => getenv('GINGER_PHP') . '/src/'];
    foreach ($roots as $prefix => $dir) {
        if (str_starts_with($fqcn, $prefix)) {
            $path = $dir . str_replace('\\', '/', substr($fqcn, strlen($prefix))) . '.php';
            if (is_file($path)) require_once $path;
            return;
        }
    }
});

use GingerPluginSdk\Client;
use GingerPluginSdk\Collections\AdditionalAddresses;
use GingerPluginSdk\Collections\OrderLines;
use GingerPluginSdk\Collections\PhoneNumbers;
use GingerPluginSdk\Collections\Transactions;
use GingerPluginSdk\Entities\Address;
use GingerPluginSdk\Entities\Customer;
use GingerPluginSdk\Entities\Extra;
use GingerPluginSdk\Entities\Line;
use GingerPluginSdk\Entities\Order;
use GingerPluginSdk\Entities\Transaction;
use GingerPluginSdk\Properties\Amount;
use GingerPluginSdk\Properties\ClientOptions;
use GingerPluginSdk\Properties\Country;
use GingerPluginSdk\Properties\Currency;
use GingerPluginSdk\Properties\EmailAddress;
use GingerPluginSdk\Properties\Locale;
use GingerPluginSdk\Properties\VatPercentage;

$_SERVER['REMOTE_ADDR'] = '198.51.100.4';
$_SERVER['HTTP_USER_AGENT'] = 'compat driver';

function oxidOrder(string $method = 'credit-card', ?string $phone = null): Order
{
    return new Order(
        currency: new Currency('EUR'),
        amount: new Amount(4990),
        transactions: new Transactions(new Transaction(paymentMethod: $method)),
        customer: new Customer(
            additionalAddresses: new AdditionalAddresses(
                new Address(addressType: 'customer', country: new Country('UA'), postalCode: '36000', street: 'Soborna', city: 'Poltava'),
                new Address(addressType: 'billing', country: new Country('NL'), postalCode: '1234AB', street: 'Donauweg', city: 'Amsterdam', housenumber: '10'),
            ),
            lastName: 'Groß-Schäfer',
            emailAddress: new EmailAddress('jurgen@example.de'),
            gender: 'male',
            phoneNumbers: $phone === null ? new PhoneNumbers() : new PhoneNumbers($phone),
            country: new Country('DE'),
            ipAddress: $_SERVER['REMOTE_ADDR'],
            locale: new Locale('de_DE'),
            merchantCustomerId: 'a7c40f631fc920687',
            address: 'Marienplatz 8 80331 München',
            addressType: 'customer',
            firstName: 'Jürgen',
        ),
        orderLines: new OrderLines(
            new Line(type: 'physical', merchantOrderLineId: '6b6efaa3', name: 'Kite', quantity: 1, amount: new Amount(4490), vatPercentage: new VatPercentage(1900), currency: new Currency('EUR'), discountRate: 0, url: 'https://oxid.example/kite'),
            new Line(type: 'shipping_fee', merchantOrderLineId: 'oxidstandard', name: 'Shipping', quantity: 1, amount: new Amount(500), vatPercentage: new VatPercentage(0), currency: new Currency('EUR')),
        ),
        extra: new Extra(['sw_order_id' => '501']),
        client: new \GingerPluginSdk\Entities\Client(userAgent: 'compat driver', platformName: 'OXID', platformVersion: '7.0.1', pluginName: 'ginger-oxid', pluginVersion: '1.0.0'),
        webhook_url: 'https://oxid.example/index.php?cl=gingerwebhook',
        return_url: 'https://oxid.example/index.php?cl=order&fnc=return',
        merchantOrderId: '0f1b2c3d4e',
        description: 'Oxid order 0f1b2c3d4e at shop 1',
    );
}

$client = new Client(new ClientOptions(endpoint: BASE, useBundle: false, apiKey: KEY));
$api = $client->getApiClient();

// sendOrder: the OXID plugin's order, answered as an Order entity
$sent = $client->sendOrder(oxidOrder());
$id = $sent->getId()->get();
check('sendOrder (OXID body, no phone)', (bool) $id && $sent->getCustomer()->getAdditionalAddress()->get(1)->getCountry()->get() === 'NL');
$raw = $api->getOrder($id);
check('stored: address_type customer, addresses, order lines, client, extra, webhook_url',
    $raw['customer']['address_type'] === 'customer' && count($raw['customer']['additional_addresses']) === 2 && count($raw['order_lines']) === 2
    && $raw['client']['platform_name'] === 'OXID' && $raw['extra']['sw_order_id'] === '501' && str_contains($raw['webhook_url'], 'gingerwebhook')
    && !isset($raw['customer']['phone_numbers']));
check('order_url on an order created with a transaction', $sent->getOrderUrl() !== null && str_contains($sent->getOrderUrl()->get(), $id));

// getOrder and updateOrder: the plugin SDK's own test changes an additional address's country
$order = $client->getOrder($id);
check('getOrder', $order->getId()->get() === $id);
$order->getCustomer()->getAdditionalAddress()->update(['country' => 'QQ'], 1);
$updated = $client->updateOrder($order);
check('updateOrder (additional_addresses[1].country)', $updated->getCustomer()->getAdditionalAddress()->get(1)->getCountry()->get() === 'QQ'
    && $api->getOrder($id)['customer']['additional_addresses'][1]['country'] === 'QQ');

// the sendOrder answer straight back to updateOrder (it holds the one-time setup_token)
$fresh = $client->sendOrder(oxidOrder('credit-card', '+49 89 123456'));
check('updateOrder with the sendOrder answer', $client->updateOrder($fresh)->getId()->get() === $fresh->getId()->get());

// currencies, through the SDK's cache file (in its Assets/)
check('checkAvailabilityForPaymentMethodUsingCurrency', $client->checkAvailabilityForPaymentMethodUsingCurrency('credit-card', new Currency('EUR')));

// a paid sale refunded; a pre-authorization captured (the customer pays in between)
// (with a customer and order lines: the SDK's Order entity and refundOrder need them)
$sale = payCard($api, $api->createOrder(readmeOrder() + ['customer' => $raw['customer'], 'order_lines' => $raw['order_lines']]));
$refund = $client->refundOrder($sale['id'], new Amount(500));
check('refundOrder', $refund['refund_of_order_id'] === $sale['id'] && $refund['amount'] === 500);
$auth = payCard($api, $api->createOrder(readmeOrder('manual') + ['customer' => $raw['customer'], 'order_lines' => $raw['order_lines']]));
$status = $api->getOrder($auth['id'])['status'];
try {
    $captured = $client->captureOrderTransaction($auth['id']);
    check("captureOrderTransaction (pre-authorization in status $status)", $captured && in_array('has-captures', $api->getOrder($auth['id'])['flags']));
} catch (\Exception $e) {
    check("captureOrderTransaction (pre-authorization in status $status): " . get_class($e) . ' ' . $e->getMessage(), false);
}

// an unknown method is refused for the method
try {
    $client->sendOrder(oxidOrder('wechat'));
    check('unknown method refused', false);
} catch (\Exception $e) {
    check('unknown method refused naming it', str_contains($e->getMessage(), 'payment method wechat'));
}

finish();
